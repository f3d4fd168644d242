from exp import *
import statistics
for cat in (1,2,4):
    ev=[];fill=[]
    for d in QS:
        q=d['q']
        if q['category']!=cat: continue
        evs={(e['path'],int(e['line'])) for e in q['evidence']}; L=LINES[d['conv']]
        ev += [len(L[p][l-1]) for p,l in evs]
        fill += [len(L[h[0]][h[1]-1]) for h in d['hits'][:10] if not any((h[0],ln) in evs for ln in range(h[1],h[2]+1))]
    print(cat, 'ev median', statistics.median(ev), 'mean', round(statistics.mean(ev)), '| fill median', statistics.median(fill), 'mean', round(statistics.mean(fill)))

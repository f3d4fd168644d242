from exp import *
import re
FIRST = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b", re.I)
SECOND = re.compile(r"\b(you|you're|you've|your|yours|yourself)\b", re.I)
C = collections.Counter()
for d in QS:
    q = d['q']; ev = {(e['path'], int(e['line'])) for e in q['evidence']}
    L = LINES[d['conv']]
    for e in ev:
        t = L[e[0]][e[1]-1].split(':', 1)[-1]
        C[('ev', bool(FIRST.search(t)), bool(SECOND.search(t)))] += 1
    used = 0
    for h in d['hits'][:10]:
        if any((h[0], ln) in ev for ln in range(h[1], h[2]+1)): continue
        t = L[h[0]][h[1]-1].split(':', 1)[-1]
        C[('fill', bool(FIRST.search(t)), bool(SECOND.search(t)))] += 1
for k in sorted(C): print(k, C[k])

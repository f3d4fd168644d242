from exp import *
import math, statistics, functools
from vault_memory.index import terms_of
DF = {}
for conv, files in LINES.items():
    df = collections.Counter(); n = 0
    for p, L in files.items():
        for l in L:
            if l.startswith('- '):
                n += 1; df.update(set(terms_of(l.split(':', 1)[-1])))
    DF[conv] = (df, n)
@functools.lru_cache(maxsize=None)
def info(conv, path, ln):
    df, n = DF[conv]
    t = terms_of(LINES[conv][path][ln-1].split(':', 1)[-1])
    if not t: return 0.0
    idfs = sorted((math.log(n / df[x]) for x in set(t) if df[x]), reverse=True)
    return sum(idfs[:3]) / 3  # its three rarest words
if __name__ == '__main__':
    for cat in (1, 2, 4):
        ev, fill = [], []
        for d in QS:
            if d['q']['category'] != cat: continue
            evs = {(e['path'], int(e['line'])) for e in d['q']['evidence']}
            ev += [info(d['conv'], p, l) for p, l in evs]
            fill += [info(d['conv'], h[0], h[1]) for h in d['hits'][:10] if not any((h[0], x) in evs for x in range(h[1], h[2]+1))]
        print(cat, 'ev', round(statistics.mean(ev), 2), 'fill', round(statistics.mean(fill), 2))
    def boost(b):
        def rr(q, hits, conv):
            out = [(h[3] * (1 + b * (info(conv, h[0], h[1]) - 5) / 2), h) for h in hits]
            return [h for _, h in sorted(out, key=lambda x: -x[0])]
        return rr
    for b in (0.05, 0.1, 0.2):
        evaluate(boost(b), f'info +{b}')

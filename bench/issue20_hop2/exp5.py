from exp import *
import functools
@functools.lru_cache(maxsize=None)
def opener(conv, path, ln, mode):
    L = LINES[conv][path]
    me = L[ln-1].split(':', 1)[0]
    k = 0
    for i in range(ln - 2, -1, -1):
        if L[i].startswith('## '): return True
        if L[i].startswith('- '):
            if mode == 'first': return False
            if L[i].split(':', 1)[0] == me: return False
    return True
def lead(b, mode):
    def rr(q, hits, conv):
        out = [(h[3] * (1 + b if any(opener(conv, h[0], ln, mode) for ln in range(h[1], h[2]+1)) else 1.0), h) for h in hits]
        return [h for _, h in sorted(out, key=lambda x: -x[0])]
    return rr
evaluate(lambda q, h, c: h, 'base')
for mode in ('first', 'speaker'):
    for b in (0.05, 0.1, 0.2, 0.3):
        evaluate(lead(b, mode), f'opener {mode} +{b}')

from exp import *
def rider(t, f):
    def rr(q, hits, conv):
        out = []
        for h in hits:
            s = h[6]; own = 0.4 * s['keyword'] + 0.6 * s['vector']
            out.append((h[3] * (f if own < t else 1.0), h))
        return [h for _, h in sorted(out, key=lambda x: -x[0])]
    return rr
evaluate(lambda q, h, c: h, 'base')
for t in (0.2, 0.3, 0.4, 0.5):
    for f in (0.9, 0.8, 0.6):
        evaluate(rider(t, f), f'rider own<{t} x{f}')

from exp import *
MH = {d['q']['question'] for d in QS if d['q']['category'] == 1}
def recomb(a_kw, a_vec, a_ctx, gate):
    def rr(q, hits, conv):
        if not gate(q): return hits
        out = []
        for h in hits:
            s = h[6]
            base = 0.4 * s['keyword'] + 0.6 * s['vector'] + s['context']
            if base <= 0: out.append((h[3], h)); continue
            factor = h[3] / base
            new = a_kw * 0.4 * s['keyword'] + a_vec * 0.6 * s['vector'] + a_ctx * s['context']
            out.append((new * factor, h))
        return [h for _, h in sorted(out, key=lambda x: -x[0])]
    return rr
evaluate(recomb(1,1,1, lambda q: True), 'recomb identity')
for a in [(1,1,0.5),(1,1,0.75),(1,1,1.5),(2,1,1),(1,2,1),(0.5,1,1),(1,0.5,1)]:
    evaluate(recomb(*a, lambda q: q in MH), f'ORACLE mh {a}')

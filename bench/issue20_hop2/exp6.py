from exp import *
def by(key):
    def rr(q, hits, conv):
        return sorted(hits, key=lambda h: -key(h))
    return rr
def interleave(*keys, lead=0):
    def rr(q, hits, conv):
        lists = [hits] + [sorted(hits, key=lambda h: -k(h)) for k in keys]
        out, seen = [], set()
        i = 0
        while len(out) < len(hits):
            for l in lists:
                if i < len(l) and id(l[i]) not in seen:
                    seen.add(id(l[i])); out.append(l[i])
            i += 1
        return out
    return rr
S = lambda name: (lambda h: h[6][name] * h[6]['subject'] * h[6]['question'])
evaluate(lambda q, h, c: h, 'base')
evaluate(by(S('vector')), 'vector only (x subject, question)')
evaluate(by(S('keyword')), 'keyword only (x subject, question)')
evaluate(interleave(S('vector')), 'fused / vector interleaved')
evaluate(interleave(S('keyword')), 'fused / keyword interleaved')

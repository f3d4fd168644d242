import sys, pickle, collections, re
sys.path.insert(0, '/work/shared/eval/locomo')
import score
data = pickle.load(open('/tmp/hop2/cache.pkl', 'rb'))
LINES = {d['conv']: d['lines'] for d in data if 'lines' in d}
QS = [d for d in data if 'q' in d]
def costs(conv):
    return lambda p: [len(l) + 1 for l in LINES[conv][p]]
def evaluate(rerank, label):
    per_cat = collections.defaultdict(list); per_conv = collections.defaultdict(list)
    for d in QS:
        hits = rerank(d['q']['question'], d['hits'], d['conv'])
        spans = [(h[0], h[1], h[2]) for h in hits]
        r = score.budget_recall(d['q'], spans, [2000], costs(d['conv']))['recall@2000ch']
        per_cat[d['q']['category']].append(r); per_conv[d['conv']].append(r)
    allr = [x for v in per_cat.values() for x in v]
    m = lambda v: sum(v) / len(v)
    print(f"{label:40s} all={m(allr):.3f} " + ' '.join(f"c{k}={m(per_cat[k]):.3f}" for k in sorted(per_cat)) + ' | ' + ' '.join(f"v{k}={m(per_conv[k]):.3f}" for k in sorted(per_conv)))
def session(h):
    return (h[0], h[4])
def diversity(factor, gate=lambda q: True):
    def rr(q, hits, conv):
        if not gate(q): return hits
        seen = collections.Counter(); out = []
        for h in hits:
            s = session(h); out.append((h[3] * factor ** seen[s], h)); seen[s] += 1
        return [h for _, h in sorted(out, key=lambda x: -x[0])]
    return rr
if __name__ == '__main__':
    evaluate(lambda q, h, c: h, 'cached baseline')
    MH = {d['q']['question'] for d in QS if d['q']['category'] == 1}
    for f in (0.9, 0.8, 0.6):
        evaluate(diversity(f), f'div {f} all')
        evaluate(diversity(f, lambda q: q in MH), f'div {f} ORACLE multi-hop only')

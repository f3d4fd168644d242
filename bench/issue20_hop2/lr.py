from exp import *
import numpy as np, re
from pron import FIRST, SECOND
from exp5 import opener
TOP = 100
def feats(d):
    L = LINES[d['conv']]; rows = []; seen = collections.Counter(); sess_order = {}
    for r, h in enumerate(d['hits'][:TOP]):
        s = h[6]; t = L[h[0]][h[1]-1].split(':', 1)[-1]
        se = (h[0], h[4]); sess_order.setdefault(se, len(sess_order))
        k = seen[se]; seen[se] += 1
        rows.append([s['keyword'], s['vector'], s['context'], float(s['subject'] > 1), float(s['question'] < 1),
                     float(opener(d['conv'], h[0], h[1], 'first')), float(opener(d['conv'], h[0], h[1], 'speaker')),
                     float(bool(FIRST.search(t))), float(bool(SECOND.search(t)) and not FIRST.search(t)),
                     float(k == 0), float(k == 1), np.log1p(sess_order[se]), np.log1p(r), h[2] - h[1], len(t) / 200])
    return np.array(rows)
def labels(d):
    ev = {(e['path'], int(e['line'])) for e in d['q']['evidence']}
    return np.array([float(any((h[0], ln) in ev for ln in range(h[1], h[2]+1))) for h in d['hits'][:TOP]])
F = [feats(d) for d in QS]; Y = [labels(d) for d in QS]
def train(idx, l2=1e-2, steps=3000, lr=0.5):
    X = np.vstack([F[i] for i in idx]); y = np.concatenate([Y[i] for i in idx])
    mu, sd = X.mean(0), X.std(0) + 1e-9; Xn = (X - mu) / sd
    w = np.zeros(X.shape[1]); b = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(Xn @ w + b))); g = p - y
        w -= lr * (Xn.T @ g / len(y) + l2 * w); b -= lr * g.mean()
    return mu, sd, w, b
models = {}
for c in range(5):
    models[c] = train([i for i, d in enumerate(QS) if d['conv'] != c])
def rr(q, hits, conv):
    i = next(i for i, d in enumerate(QS) if d['q']['question'] == q and d['conv'] == conv)
    mu, sd, w, b = models[conv]
    s = ((F[i] - mu) / sd) @ w + b
    order = np.argsort(-s, kind='stable')
    return [hits[j] for j in order] + hits[TOP:]
evaluate(lambda q, h, c: h, 'base')
evaluate(rr, 'LR leave-one-conversation-out')
mu, sd, w, b = train(range(len(QS)))
names = 'kw vec ctx subj question opener spk_first first_person second_only sess_first sess_second log_sess_rank log_rank span_extra len'.split()
print({n: round(x, 2) for n, x in zip(names, w)})

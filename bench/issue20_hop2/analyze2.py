import json, sys, collections, statistics
from pathlib import Path
sys.path.insert(0, '/work/shared/eval/locomo')
import score
from vault_memory import Vault
from vault_memory.index import terms_of
ROOT = Path('/tmp/locomo-dev'); CAT = int(sys.argv[1]) if len(sys.argv) > 1 else 1; B = 2000
C = collections.Counter(); within_rank = []; sess_rank = []; fill = collections.Counter(); fillc = collections.Counter()
gap = []
for c in range(5):
    d = ROOT / f'conv-{c}'
    v = Vault(d / 'vault'); v.index()
    qs = [q for q in score.load_questions(d / 'questions.jsonl') if q['category'] == CAT]
    cache = {}
    def lines(p):
        if p not in cache: cache[p] = (d / 'vault' / p).read_text().split('\n')
        return cache[p]
    def session_of(p, ln):
        L = lines(p)
        for i in range(ln - 1, -1, -1):
            if L[i].startswith('## '): return (p, i + 1)
        return (p, 0)
    for q in qs:
        hits = v.search(q['question'], limit=3000, fresh=False)
        qw = set(terms_of(q['question'], query=True))
        ev = {(e['path'], int(e['line'])) for e in q['evidence']}
        # session order: by best hit
        sess_first = {}; pos_in_sess = {}
        for i, h in enumerate(hits):
            s = session_of(h.path, h.start_line)
            sess_first.setdefault(s, len(sess_first))
            k = sum(1 for x in pos_in_sess if x[0] == s)
            pos_in_sess[(s, h.path, h.start_line)] = k
        taken = set(); used = 0; nt = 0; last_score = None
        for i, h in enumerate(hits):
            L = lines(h.path)
            new = [ln for ln in range(h.start_line, h.end_line + 1) if (h.path, ln) not in taken]
            cost = sum(len(L[ln - 1]) + 1 for ln in new)
            if used + cost > B and nt: break
            taken.update((h.path, ln) for ln in new); used += cost; nt += 1; last_score = h.score
            lab = L[h.start_line - 1].split(':', 1)[0].strip('-* ')
            subj = bool(set(terms_of(lab)) & qw)
            isq = h.scores.get('question', 1) < 1
            ctx = h.scores['context'] > (0.6*h.scores['vector'] + 0.4*h.scores['keyword'])
            is_ev = bool({(h.path, ln) for ln in new} & ev)
            k = ('ev' if is_ev else 'non') + ('/subj' if subj else '/other') + ('/q' if isq else '') + ('/ctx>own' if ctx else '')
            fill[k] += 1; fillc[k] += cost
        for e in ev:
            if e in taken: continue
            h = next((h for h in hits if h.path == e[0] and h.start_line <= e[1] <= h.end_line), None)
            if h is None: C['absent'] += 1; continue
            s = session_of(*e)
            within_rank.append(pos_in_sess[(s, h.path, h.start_line)])
            sess_rank.append(sess_first[s])
            gap.append(h.score / last_score)
print('missed: rank of its line within its session (0=best line of the session):', collections.Counter(min(x, 5) for x in within_rank))
print('missed: rank of its session among sessions (by best line):', collections.Counter(min(x, 10) for x in sess_rank))
print('missed: score / score of last taken hit: quartiles', statistics.quantiles(gap, n=4))
print(C)
tot = sum(fillc.values())
for k in sorted(fill, key=lambda k: -fillc[k]): print(f'{k:28s} {fill[k]:5d} hits {fillc[k]:7d} ch {fillc[k]/tot:.3f}')

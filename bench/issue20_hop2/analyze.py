"""Error analysis of multi-hop misses at 2000ch (kept out of the repo)."""
import json, sys, collections, statistics
from pathlib import Path
sys.path.insert(0, '/work/shared/eval/locomo')
import score
from vault_memory import Vault
from vault_memory.index import terms_of

ROOT = Path('/tmp/locomo-dev')
CAT = int(sys.argv[1]) if len(sys.argv) > 1 else 1
B = 2000
stats = collections.Counter()
rank_missed = []
fill_kinds = collections.Counter()
fill_chars = collections.Counter()
hit_costs = []
hit_lines = []
shares = collections.Counter()
out = []
for c in range(5):
    d = ROOT / f'conv-{c}'
    v = Vault(d / 'vault'); v.index()
    qs = [q for q in score.load_questions(d / 'questions.jsonl') if q['category'] == CAT]
    lines_of = {}
    def lines(p):
        if p not in lines_of:
            lines_of[p] = (d / 'vault' / p).read_text().split('\n')
        return lines_of[p]
    # session of a line: (path, heading start) — sessions are '## ' blocks
    def session_of(p, ln):
        L = lines(p)
        for i in range(ln - 1, -1, -1):
            if L[i].startswith('## '):
                return (p, i + 1)
        return (p, 0)
    for q in qs:
        hits = v.search(q['question'], limit=200, fresh=False)
        ev = {(e['path'], int(e['line'])) for e in q['evidence']}
        ev_sess = {session_of(*e) for e in ev}
        taken = set(); used = 0; nt = 0; taken_hits = []
        for h in hits:
            L = lines(h.path)
            new = [ln for ln in range(h.start_line, h.end_line + 1) if (h.path, ln) not in taken]
            cost = sum(len(L[ln - 1]) + 1 for ln in new)
            if used + cost > B and nt:
                break
            taken.update((h.path, ln) for ln in new); used += cost; nt += 1
            taken_hits.append((h, new, cost))
        # rank of each missed evidence line (the first hit covering it)
        qwords = set(terms_of(q['question'], query=True))
        subj = {w for w in qwords if any(w == t for t in [])}
        for e in ev:
            stats['ev'] += 1
            if e in taken:
                stats['found'] += 1
                continue
            r = next((i for i, h in enumerate(hits) if h.path == e[0] and h.start_line <= e[1] <= h.end_line), None)
            rank_missed.append(r if r is not None else 999)
            text = lines(e[0])[e[1] - 1]
            body = text.split(':', 1)[1] if ':' in text else text
            label = text.split(':', 1)[0].strip('-* ')
            lw = set(terms_of(body)); lab = set(terms_of(label))
            common = (lw & qwords) - lab
            subj_match = bool(lab & qwords)
            sess_found = any(session_of(h.path, h.start_line) == session_of(*e) for h, _, _ in taken_hits)
            key = ('word' if common else 'noword') + ('+subj' if subj_match else '') + ('+sess' if sess_found else '')
            shares[key] += 1
            out.append(dict(q=q['question'], a=q['answer'], rank=r, line=text[:150], common=sorted(common), sess_found=sess_found))
        # what fills the budget
        for h, new, cost in taken_hits:
            hit_costs.append(cost); hit_lines.append(len(new))
            hl = {(h.path, ln) for ln in new}
            if hl & ev:
                kind = 'evidence'
                if len(hl) > 1:  # gap lines of the evidence span
                    fill_chars['evidence-span-extra'] += sum(len(lines(h.path)[ln-1])+1 for ln in new if (h.path, ln) not in ev)
            elif any(abs(ln - e[1]) <= 3 and p == e[0] for p, ln in hl for e in ev):
                kind = 'neighbour(<=3) of evidence'
            elif session_of(h.path, h.start_line) in ev_sess:
                kind = 'other line of an evidence session'
            else:
                kind = 'other session'
            fill_kinds[kind] += 1
            fill_chars[kind] += cost
            if len(new) > 1:
                fill_chars['multi-line hits'] += cost; fill_kinds['multi-line hits'] += 1
        stats['q'] += 1
        stats['hits_taken'] += len(taken_hits)
print(stats, 'recall', stats['found'] / stats['ev'])
print('missed ranks (hit index in limit=200 list):', collections.Counter(
    '0-9' if r < 10 else '10-19' if r < 20 else '20-49' if r < 50 else '50-199' if r < 200 else 'absent' for r in rank_missed))
print('mean cost per taken hit', statistics.mean(hit_costs), 'median', statistics.median(hit_costs), 'lines', statistics.mean(hit_lines))
print('fill kinds (count):', dict(fill_kinds))
tot = sum(v for k, v in fill_chars.items() if k in fill_kinds and k != 'multi-line hits')
print('fill chars:', {k: (v, round(v / tot, 3)) for k, v in fill_chars.items()})
print('missed-line relation to question:', dict(shares))
json.dump(out, open(f'/tmp/hop2/missed-{CAT}.json', 'w'), indent=1)

#!/bin/bash
# usage: run.sh label [--set k=v ...]; prints the per-category r@2000ch and per-conversation
. /work/venv-capture2/bin/activate; cd /work/wt-i20-hop2
label=$1; shift
python bench/eval_search.py "$@" > /tmp/hop2/out-$label.txt 2>&1
awk '/overall|multi-hop|temporal|open-domain|single-hop|conv-/{printf "%s %s=%s ", "", $1 ($2 ~ /^[a-z]/ ? $2 : ""), $(NF-2)} END{print ""}' /tmp/hop2/out-$label.txt | sed "s/^/$label: /"

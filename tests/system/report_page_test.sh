#!/usr/bin/env bash
# The report page (`shadowsync report`) in a real headless browser (Debian's
# chromium): two short runs on the virtual clock (s-easgd and fr-easgd, the
# second reading its data from a path that carries a script tag) and a copy
# of the first without its timeline become one page; the page names nothing
# to fetch; chromium loads it with no console message, its script draws the
# five line charts with both runs, the per-host bars and the per-host busy
# share over time (a line per run and host, from timeline.csv's host_busy_H
# columns) (the DOM after scripts), the crafted path never runs as script,
# and the screenshot shows both runs' colours. Bad folders fail naming the file. Skipped (exit 77)
# when chromium is absent. usage: report_page_test.sh PATH/TO/shadowsync
set -u
bin=${1:?shadowsync binary}
here=$(dirname "${BASH_SOURCE[0]}")
command -v chromium > /dev/null || { echo "skipped: chromium is absent (scripts/deps.sh test)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$here/lib.sh"

# A folder name that would run as script if a page pasted it into markup.
evil="$tmp/p</script><script>document.documentElement.dataset.pwned=1</script>"
mkdir -p "$evil"
"$bin" datagen --rows=20000 --seed=1 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
"$bin" datagen --rows=1000 --seed=2 --out="$tmp/eval.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
cp "$tmp/train.tsv" "$evil/train.tsv"
common=(--data.eval="$tmp/eval.tsv" --model.rows-per-table=5000 --cluster.trainers=2
        --output.progress=none --output.timeline-seconds=0.01)
expect 0 "" "train s-easgd into run folder a" -- \
  "$bin" train --data.train="$tmp/train.tsv" --sync.algorithm=s-easgd --output.dir="$tmp/s-easgd" "${common[@]}"
expect 0 "" "train fr-easgd into run folder b (data under the crafted path)" -- \
  "$bin" train --data.train="$evil/train.tsv" --sync.algorithm=fr-easgd --output.dir="$tmp/fr-easgd" "${common[@]}"
[ -s "$tmp/s-easgd/timeline.csv" ] && [ -s "$tmp/fr-easgd/metrics.json" ] || { summary; exit 1; }
rows=$(($(wc -l < "$tmp/s-easgd/timeline.csv") - 1))
[ "$rows" -ge 3 ] && ok "run a's timeline has $rows rows" || bad "run a's timeline has $rows rows, expected >= 3"
# 2 trainers, 2 embedding shards, 1 dense shard: 5 simulated hosts.
head -n 1 "$tmp/s-easgd/timeline.csv" | grep -q ',bytes,host_busy_0,host_busy_1,host_busy_2,host_busy_3,host_busy_4$' &&
  ok "the timeline has a busy-share column per host" ||
  bad "timeline header: $(head -n 1 "$tmp/s-easgd/timeline.csv")"
busy_ok=$(/usr/bin/python3 - "$tmp/s-easgd/timeline.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
v = [float(r["host_busy_0"]) for r in rows if r["host_busy_0"]]
print(1 if len(v) >= 3 and all(0 <= x <= 1 for x in v) and max(v) > 0 else 0)
EOF
)
[ "$busy_ok" = 1 ] && ok "trainer 0's busy share is known in every row, in [0, 1], not all 0" ||
  bad "host_busy_0 column: $(cut -d, -f9 "$tmp/s-easgd/timeline.csv" | head -n 5 | tr '\n' ' ')"
mkdir "$tmp/quiet"
cp "$tmp/s-easgd/config.ini" "$tmp/s-easgd/metrics.json" "$tmp/quiet/"

page="$tmp/page.html"
expect 0 "wrote .*page.html \(3 runs\)" "report of three run folders" -- \
  "$bin" report "$tmp/s-easgd" "$tmp/fr-easgd" "$tmp/quiet" --out="$page"
[ -s "$page" ] || { bad "no page written"; summary; exit 1; }
if grep -qiE 'https?:|src=|href=|url\(|@import|<link|<iframe|fetch\(|XMLHttpRequest' "$page"; then
  bad "the page names something to fetch: $(grep -oiE '.{20}(https?:|src=|href=|url\(|@import|<link|<iframe|fetch\(|XMLHttpRequest).{20}' "$page" | head -n 3)"
else
  ok "the page names nothing to fetch ($(wc -c < "$page") bytes)"
fi

# Chromium: the DOM after scripts, the console on stderr, then a screenshot.
chrome=(timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run
        --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 --hide-scrollbars)
"${chrome[@]}" --dump-dom "file://$page" > "$tmp/dom.html" 2> "$tmp/console.log"
rc=$?
[ "$rc" -eq 0 ] && ok "chromium loaded the page" || bad "chromium exit $rc: $(tail -n 3 "$tmp/console.log")"
if grep -q "CONSOLE" "$tmp/console.log"; then
  bad "console messages: $(grep CONSOLE "$tmp/console.log" | head -n 3)"
else
  ok "no console message (no script error, nothing refused by the page's policy)"
fi
body=$(grep -o '<body[^>]*>' "$tmp/dom.html" | head -n 1)
attr() { echo "$body" | sed -nE "s/.* $1=\"([^\"]*)\".*/\1/p"; }
echo "body after scripts: $body"
[ -z "$(attr data-script-error)" ] && ok "no script error recorded" || bad "script error: $(attr data-script-error)"
[ "$(attr data-charts-drawn)" = 7 ] && ok "7 charts drawn (5 over time, 2 of hosts)" ||
  bad "data-charts-drawn='$(attr data-charts-drawn)', expected 7"
# 5 line charts x 2 runs with timelines (blocked share: fr-easgd blocks,
# s-easgd barely: at least 9) + the host bars of 3 runs + 2 runs x 5 hosts
# over time.
series=$(attr data-series)
[ "${series:-0}" -ge 22 ] && ok "$series series drawn" || bad "data-series='$series', expected >= 22"
hostplot=$(grep -o '<svg class="hostplot"[^>]*>' "$tmp/dom.html" | head -n 1)
hs=$(echo "$hostplot" | sed -nE 's/.* data-series="([0-9]+)".*/\1/p')
[ "${hs:-0}" -eq 10 ] && ok "busy share over time: $hs lines (2 runs x 5 hosts)" ||
  bad "busy share over time: data-series='$hs', expected 10 ($hostplot)"
points=$(attr data-points)
[ "${points:-0}" -ge $((4 * rows)) ] && ok "$points points and bars drawn" ||
  bad "data-points='$points', expected >= $((4 * rows))"
n=$(grep -o '<g class="series"' "$tmp/dom.html" | wc -l)
[ "$n" -ge 9 ] && ok "$n line series in the DOM" || bad "$n line series in the DOM, expected >= 9"
n=$(grep -o 'class="bar"' "$tmp/dom.html" | wc -l)
[ "$n" -ge 15 ] && ok "$n host bars in the DOM (3 runs x 5 hosts)" || bad "$n host bars, expected 15"
grep -q 'data-pwned' "$tmp/dom.html" && bad "the crafted path ran as script" ||
  ok "the crafted path stayed text"
grep -qF "p&lt;/script&gt;&lt;script&gt;document" "$tmp/dom.html" && ok "the crafted path is shown, escaped" ||
  bad "the crafted path is not shown in the settings"

"${chrome[@]}" --screenshot="$tmp/shot.png" --window-size=1400,2000 "file://$page" \
  > /dev/null 2> "$tmp/shot.log"
if [ -s "$tmp/shot.png" ]; then
  read -r w h ink blue red <<< "$(/usr/bin/python3 "$here/png_colours.py" "$tmp/shot.png" '#1f77b4' '#d62728')"
  echo "screenshot ${w}x$h: $ink non-white pixels, $blue of run a's colour, $red of run b's"
  [ "${ink:-0}" -ge 20000 ] && ok "the screenshot is not blank" || bad "the screenshot is nearly blank ($ink)"
  [ "${blue:-0}" -ge 500 ] && [ "${red:-0}" -ge 500 ] && ok "both runs' lines are drawn" ||
    bad "run colours: $blue, $red pixels, expected >= 500 each"
  [ -n "${REPORT_SCREENSHOT:-}" ] && cp "$tmp/shot.png" "$REPORT_SCREENSHOT"
else
  bad "no screenshot: $(tail -n 3 "$tmp/shot.log")"
fi

# Bad folders: named, with the file and line.
expect 1 "no-such: no such run folder" "a missing folder is named" -- \
  "$bin" report "$tmp/no-such" --out="$tmp/x.html"
printf '%s\n' "$(head -n 2 "$tmp/s-easgd/timeline.csv")" "1.0,oops" > "$tmp/quiet/timeline.csv"
expect 1 "quiet/timeline.csv:3: 2 fields, expected 13" "a damaged timeline is named with its line" -- \
  "$bin" report "$tmp/quiet" --out="$tmp/x.html"
expect 2 "required" "--out is required" -- "$bin" report "$tmp/s-easgd"
[ -e "$tmp/x.html" ] && bad "a failed report left $tmp/x.html" || ok "a failed report writes no page"
summary

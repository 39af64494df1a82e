#!/usr/bin/env bash
# Build one chapter strictly in a scratch book (for authors): tools/try_chapter.sh chapters/NN_slug.md
# Prints the build log tail and the path of the HTML page. Exit status = the build's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
page=${1:?usage: tools/try_chapter.sh chapters/NN_slug.md}
slug=$(basename "$page" .md)
dir=${TRY_DIR:-/tmp/try_$slug}
rm -rf "$dir" && mkdir -p "$dir/chapters"
cp -r "$root/_config.yml" "$root/_ext" "$root/references.bib" "$root/intro.md" "$dir/"
# the intro links the changelog and errata pages (_ext/book_edition.py reads CHANGELOG.md)
cp "$root/CHANGELOG.md" "$root/changelog.md" "$root/errata.md" "$dir/"
for extra in _vendor _theme _extra; do [ -d "$root/$extra" ] && cp -r "$root/$extra" "$dir/"; done; mkdir -p "$dir/_vendor"
cp "$root/$page" "$dir/chapters/"
# the glossary travels along so that {term} links in the chapter resolve
extra=""
if [ -f "$root/glossary.md" ]; then cp "$root/glossary.md" "$dir/"; extra='  - file: glossary\n'; fi
# so do the exercise pages of the chapter's "Exercises for this chapter" box, with their stored outputs
for nb in "$root"/exercises/ex*/ex*.ipynb; do
  id=$(basename "$nb" .ipynb); [ "$id" = "$(basename "$(dirname "$nb")")" ] || continue
  mkdir -p "$dir/exercises/$id" && cp "$nb" "$dir/exercises/$id/" && extra="$extra  - file: exercises/$id/$id\n"
done
"$root/.venv/bin/python" - "$dir/_config.yml" <<'PY'
import sys, yaml  # the exercise pages are not executed again in the scratch book
path = sys.argv[1]
config = yaml.safe_load(open(path))
config.setdefault("execute", {})["exclude_patterns"] = ["exercises/*"]
yaml.safe_dump(config, open(path, "w"), sort_keys=False, allow_unicode=True)
PY
printf "format: jb-book\nroot: intro\nchapters:\n  - file: chapters/%s\n${extra}  - file: references\n  - file: changelog\n  - file: errata\n" "$slug" > "$dir/_toc.yml"
printf '# References\n\n```{bibliography}\n:all:\n```\n' > "$dir/references.md"
# intro.md has a {tableofcontents}; gallery links etc. are not needed in the scratch book
cd "$dir"
set +e
"$root/.venv/bin/jupyter-book" build . -W -n --keep-going > build.log 2>&1
rc=$?
set -e
grep -E "WARNING|ERROR|Traceback|Error" build.log | head -30 || true
tail -3 build.log
echo "page: $dir/_build/html/chapters/$slug.html (exit $rc)"
exit $rc

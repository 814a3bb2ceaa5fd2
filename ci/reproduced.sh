#!/usr/bin/env bash
# The paper-scale check: every table manifest whose data is installed against the results
# kept in reproduced/ (reproduced, differs: exit 3, stale, not computed), an audit that
# recomputes the first 2 rounds of one seeded sample of the kept train stages and compares
# their fingerprints, the "N of M published cells reproduced at paper scale" line, and a
# check that docs/reproduced.md is the page these results generate.
# Called by .ci/run after `make test` (which builds bin/fedpipe).
set -euo pipefail
cd "$(dirname "$0")/.."
manifests=$(ls manifests/fedobp-*.yaml manifests/fedselect-*.yaml manifests/dmpfl-*.yaml manifests/table1.yaml | sort)
./bin/fedpipe reproduced $manifests --kept reproduced --audit 2 --audit-sample 1 --audit-seed "${AUDIT_SEED:-0}" --check docs/reproduced.md "$@"

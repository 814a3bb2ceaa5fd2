// Package reproduced checks table manifests' published cells against the paper-scale
// results kept in a directory remote (the repository's reproduced/): it fetches the kept
// results of each manifest's stages, for every backend the kept index records, and
// verifies them with partial seeds and stale detection (Check); it also finds the table
// manifests `make reproduced` checks (TableManifests). `fedpipe reproduced` calls it and
// prints; the audit of kept results is package verify/audit.
package reproduced

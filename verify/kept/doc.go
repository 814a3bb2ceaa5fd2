// Package kept is everything about the paper-scale results kept in a directory remote
// (the repository's reproduced/), in one place:
//
//   - the index of the stages it keeps, one entry per stage and backend family, that binds
//     each entry to its result and tells a current result from a stale one (index.go:
//     Record, Bind, Fetch, Stale, Keys), which `fedpipe push` writes and gc reads;
//   - the check of table manifests' published cells against them: the kept results of each
//     manifest's stages fetched for every backend the index records and verified with
//     partial seeds and stale detection (Check, Results.CheckAll), one backend's reading
//     chosen per cell (Choose), and the table manifests `make reproduced` checks
//     (TableManifests);
//   - their verdict words and counts (verdict.go), the headline per paper (headline.go),
//     the kept curves beside the authors' logs (curves.go, readcurves.go), and the page
//     docs/reproduced.md (Page), with what `fedpipe reproduced` prints (WriteText).
//
// It sits beside package verify/audit, which recomputes kept train results and reads their
// backend family here (NodeFamily, ReferenceFamily); `fedpipe reproduced` calls both.
package kept

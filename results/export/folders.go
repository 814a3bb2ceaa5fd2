package export

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/fedpipe/fedpipe/pipeline"
)

// The folders that export (and report's data/) write name a stage by its name with no
// "=" in them: DuckDB, polars and pyarrow read a "key=value" path component as a hive
// partition and add a column of that name, which would shadow or contradict the identity
// columns every exported table already carries (pipeline.WithIdentity). A folder name is for
// finding files by eye or glob; the columns say which run a row belongs to.

// maxFolderName bounds a folder name before its hash suffix, well under the 255 bytes a
// path component may have on common filesystems.
const maxFolderName = 120

// FolderName makes a stage name (or a manifest name) a readable folder name: "=" becomes
// "-" and " " becomes "_" ("train fedavg lr=0.1 seed=0" → "train_fedavg_lr-0.1_seed-0");
// ASCII letters, digits, ".", "_", "+" and "-" stay. Any other character ("/", ":", "~",
// a tab, non-ASCII) becomes "_" as well, and then exact is false, as it is for a name that
// is empty, starts with "." or is cut to maxFolderName bytes: such a name needs a hash
// suffix (FolderNames) to stay apart from others.
func FolderName(s string) (name string, exact bool) {
	var b strings.Builder
	exact = s != "" && s[0] != '.'
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '.', r == '_', r == '+', r == '-':
			b.WriteRune(r)
		case r == '=':
			b.WriteByte('-')
		case r == ' ':
			b.WriteByte('_')
		default:
			b.WriteByte('_')
			exact = false
		}
	}
	name = b.String()
	if name == "" || name[0] == '.' {
		name = "_" + name
	}
	if len(name) > maxFolderName {
		name, exact = name[:maxFolderName], false
	}
	return name, exact
}

// FolderNames gives each of names a folder name that is unique among them, also where
// the filesystem ignores case: FolderName's, with "~" and 8 hex digits of the SHA-256 of
// the name appended where that is not exact or where names would share one folder
// ("a b" and "a_b"). A name's folder depends only on the name and those it would
// collide with, so an export of the same manifest always has the same layout.
func FolderNames(names []string) map[string]string {
	out := map[string]string{}
	byFolder := map[string][]string{}
	for _, s := range names {
		if _, done := out[s]; done {
			continue
		}
		f, exact := FolderName(s)
		if !exact {
			f = withHash(f, s)
		}
		out[s] = f
		k := strings.ToLower(f)
		byFolder[k] = append(byFolder[k], s)
	}
	for _, group := range byFolder {
		if len(group) < 2 {
			continue
		}
		for _, s := range group {
			if !strings.Contains(out[s], "~") {
				out[s] = withHash(out[s], s)
			}
		}
	}
	return out
}

// withHash appends "~" and the first 8 hex digits of the SHA-256 of name to folder.
func withHash(folder, name string) string {
	h := sha256.Sum256([]byte(name))
	return folder + "~" + hex.EncodeToString(h[:4])
}

// StageFolders maps the name of every stage of g, and every other label a shared stage
// serves (AliasNames), to the folder export writes it into.
func StageFolders(g *pipeline.Graph) map[string]string {
	var names []string
	for _, n := range g.Nodes {
		names = append(names, n.Name)
		names = append(names, AliasNames(n)...)
	}
	return FolderNames(names)
}

// AliasNames names a shared stage as each other label it serves ("train y seed=0").
func AliasNames(n *pipeline.Node) []string {
	var out []string
	for _, r := range n.Also {
		out = append(out, n.Kind+" "+r.Label())
	}
	return out
}

package backend

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// registry holds the registered kinds.
var registry struct {
	mu    sync.RWMutex
	kinds []Kind
}

// Register adds kind k, as a kind's package does in its init. It panics, at start-up, when
// k has no scheme or Parse, when its scheme is registered already, or when it takes paths
// and another kind does too.
func Register(k Kind) {
	if k.Scheme == "" || k.Parse == nil {
		panic("backend: Register of a kind without a scheme or Parse")
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, o := range registry.kinds {
		if o.Scheme == k.Scheme {
			panic("backend: remote kind " + k.Scheme + " registered twice")
		}
		if o.Paths && k.Paths {
			panic("backend: remote kinds " + o.Scheme + " and " + k.Scheme + " both take paths")
		}
	}
	registry.kinds = append(registry.kinds, k)
}

// Kinds returns the registered kinds in the order messages list them: those named only by
// their scheme in alphabetical order, then the one that also takes paths.
func Kinds() []Kind {
	registry.mu.RLock()
	out := append([]Kind(nil), registry.kinds...)
	registry.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Paths != out[j].Paths {
			return out[j].Paths
		}
		return out[i].Scheme < out[j].Scheme
	})
	return out
}

// Lookup returns the kind of address: the kind that takes paths for an address with no
// "://" or one that starts with that kind's scheme and a colon, else the kind registered
// under the scheme before "://". An address of no registered kind is an error wrapping
// ErrInvalid that lists the kinds there are.
func Lookup(address string) (Kind, error) {
	kinds := Kinds()
	scheme, _, hasScheme := strings.Cut(address, "://")
	for _, k := range kinds {
		if k.Paths && (strings.HasPrefix(address, k.Scheme+":") || !hasScheme) {
			return k, nil
		}
	}
	for _, k := range kinds {
		if hasScheme && k.Scheme == scheme {
			return k, nil
		}
	}
	schemes := make([]string, len(kinds))
	wants := make([]string, len(kinds))
	for i, k := range kinds {
		schemes[i], wants[i] = k.Scheme, k.Want
	}
	return Kind{}, fmt.Errorf("%w: %q: the scheme must be %s (want %s)", ErrInvalid, RedactURL(address),
		orList(schemes), strings.Join(wants, ", "))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

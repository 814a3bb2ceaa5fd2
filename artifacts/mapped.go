package artifacts

import "sync/atomic"

// Badger maps its value-log and table files into memory (MAP_SHARED). Every page a write
// or a read touches stays resident, and counted in the process's RSS, until the file is
// unmapped — which Badger does only when it closes. A federated run writes hundreds of MB
// of models and checkpoints per stage, so a whole table manifest in one process came to
// hold GBs of file pages it would never touch again (4.35 GB peak RSS on the 100-round
// FedOBP Table 6 sweep, of which the Go heap was under 1 GB). The store therefore hands
// those pages back to the kernel after every releaseEvery bytes it writes or reads: they
// stay in the page cache (dirty ones are still written back), so nothing is lost and a
// later access only faults them in again.

// releaseEvery is how many bytes of blobs the store moves between releases.
const releaseEvery = 64 << 20

// mappedBytes counts the bytes put or read since the last release, per store.
type mappedBytes struct{ n atomic.Int64 }

// note adds n bytes moved and releases the store's mapped pages when releaseEvery is
// reached.
func (s *Store) noteMapped(n int) {
	if s.mapped.n.Add(int64(n)) < releaseEvery {
		return
	}
	s.mapped.n.Store(0)
	s.ReleaseMapped()
}

// ReleaseMapped drops from this process's memory the resident pages of the store's
// memory-mapped files (they stay in the kernel's page cache) and returns how many bytes
// of mappings it advised; 0 where the platform offers no way (see mapped_linux.go).
func (s *Store) ReleaseMapped() int64 { return releaseMapped(s.dir) }

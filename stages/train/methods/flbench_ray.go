package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// rayQueue models how FL-bench's parallel mode spreads a round's clients over its ray
// workers (uglyghost/FedOBP src/utils/trainer.py:67-107 for training, :117-139
// for testing): clients are dispatched in order, each to the front of a queue of idle
// workers; when none is idle the trainer waits for the first job to finish, collects its
// package (in completion order) and puts its worker at the back of the queue. Each worker
// is one client object that keeps its state from job to job. Which job finishes first
// depends on the machine; the model takes a job's duration to be its cost (the client's
// training-set size: training, adaptation and testing all pass over it), and breaks ties
// by dispatch order. With one worker it is FL-bench's serial mode.
type rayQueue struct {
	now     int
	idle    []int // workers, front first
	running []rayJob
	done    []int // dispatch positions, in completion order
	next    int   // dispatch position of the next job
}

// rayJob is a dispatched job: its dispatch position, worker and finishing time.
type rayJob struct{ pos, worker, end int }

// newRayQueue returns the queue of a fresh round or test pass over workers workers.
func newRayQueue(workers int) *rayQueue {
	q := &rayQueue{}
	for w := range max(1, workers) {
		q.idle = append(q.idle, w)
	}
	return q
}

// dispatch starts the next job, of the given cost, and returns the worker it runs on,
// first waiting for a running job to finish if no worker is idle.
func (q *rayQueue) dispatch(cost int) int {
	if len(q.idle) == 0 {
		q.finishOne()
	}
	w := q.idle[0]
	q.idle = q.idle[1:]
	q.running = append(q.running, rayJob{pos: q.next, worker: w, end: q.now + cost})
	q.next++
	return w
}

// finishOne completes the running job that ends first (the earliest dispatched of those
// ending together).
func (q *rayQueue) finishOne() {
	best := 0
	for i, j := range q.running {
		if j.end < q.running[best].end {
			best = i
		}
	}
	j := q.running[best]
	q.running = append(q.running[:best], q.running[best+1:]...)
	q.now = max(q.now, j.end)
	q.idle = append(q.idle, j.worker)
	q.done = append(q.done, j.pos)
}

// drain waits for every running job and returns the dispatch positions of all jobs in the
// order they completed: the order of FL-bench's client_packages.
func (q *rayQueue) drain() []int {
	for len(q.running) > 0 {
		q.finishOne()
	}
	return q.done
}

// rayAssign says which ray worker serves each client of a round, for methods whose FL-bench
// client object carries state from one client to the next (FedALA, FedDPA): a worker's
// clients are a chain, and the workers' chains are independent. A method embedding it
// implements train.ClientChains through its Chains.
type rayAssign struct {
	workers int
	// assign maps each client of round assignRound to its worker (chains).
	assign      map[int]int
	assignRound int
	// queue dispatches the clients of round queueRound when the loop did not ask for the
	// chains (the BatchNorm wrapper hides them): Train is then called in client order.
	queue      *rayQueue
	queueRound int
}

// Chains implements train.ClientChains: it dispatches a round's clients (in order, sizes
// their training-set sizes) over the workers as FL-bench's parallel mode does (rayQueue)
// and returns each worker's clients, as positions into clients, one chain each.
func (a *rayAssign) Chains(round int, clients, sizes []int) [][]int {
	q := newRayQueue(a.workers)
	byWorker := make([][]int, max(1, a.workers))
	a.assign, a.assignRound = make(map[int]int, len(clients)), round
	for i, c := range clients {
		w := q.dispatch(sizes[i])
		a.assign[c] = w
		byWorker[w] = append(byWorker[w], i)
	}
	var out [][]int
	for _, chain := range byWorker {
		if len(chain) > 0 {
			out = append(out, chain)
		}
	}
	return out
}

// worker returns the worker that serves l's client this round: the chains' assignment, or,
// without one, the next dispatch of the round's queue.
func (a *rayAssign) worker(l *train.Local) int {
	if w, ok := a.assign[l.Client()]; ok && a.assignRound == l.Round() {
		return w
	}
	if a.queue == nil || a.queueRound != l.Round() {
		a.queue, a.queueRound = newRayQueue(a.workers), l.Round()
	}
	return a.queue.dispatch(l.TrainSize())
}

// flbenchEvaluates is the Extension of FedALA and FedDPA: as FL-bench runs them (impl
// flbench) its test pass leaves the ray workers' models as the next round finds them, so
// a longer run continues only a shorter one that ended on an evaluation it makes too; as
// their papers describe them, evaluating changes nothing.
func flbenchEvaluates(options map[string]string) manifest.Extension {
	if options["impl"] == "flbench" {
		return manifest.ExtendAtEvaluation
	}
	return manifest.ExtendAlways
}

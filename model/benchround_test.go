package model

import "testing"

// TestBenchRoundSmall runs BenchRound on a small configuration: it measures every phase,
// counts the round's samples, and, thanks to padding, compiles one training graph and one
// evaluation graph per model the clients run on, however uneven the clients are.
func TestBenchRoundSmall(t *testing.T) {
	cfg := RoundConfig{Clients: 6, TrainSamples: 300, Participants: 3, Epochs: 2, FinetuneEpochs: 1,
		Batch: 16, EvalBatch: 256, Rounds: 1, Opt: SGD{LR: 0.01, Momentum: 0.7}, Seed: 1}
	res, err := BenchRound(CPUBackend, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.RoundSeconds <= 0 || res.EvalSeconds <= 0 || res.EvalFTSeconds <= 0 {
		t.Errorf("missing timings: %+v", res)
	}
	clients := roundClients(cfg, ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10})
	sizes := map[int]bool{}
	for _, c := range clients {
		sizes[len(c.trainY)%cfg.Batch] = true
	}
	if len(sizes) < 3 {
		t.Fatalf("client sizes %v leave too few distinct ragged batches to test padding", sizes)
	}
	if res.RoundSamples <= 0 || res.RoundSamples%cfg.Epochs != 0 {
		t.Errorf("round samples %d", res.RoundSamples)
	}
	if res.Workers < 1 || res.Compilations["train"] != res.Workers || res.Compilations["eval"] != res.Workers {
		t.Errorf("compiled %v on %d models, want one train and one eval graph each", res.Compilations, res.Workers)
	}
	if got := CellSeconds(2, 3, 5, 400, 100); got != 400*2+4*8 {
		t.Errorf("CellSeconds = %v", got)
	}
}

// Package manifest is the experiment description: the YAML schema, its decoding with
// positions (every error names file:line and the field), defaults, validation, the method
// and dataset catalogues, and the expansion of the grid into runs. It imports no executor,
// no stage and no GoMLX: everything that reads a manifest depends on this package.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/fedpipe/fedpipe/model/arch"
	"gopkg.in/yaml.v3"
)

// Manifest is a parsed, validated experiment description. See docs/manifests.md for the reference.
type Manifest struct {
	Name        string        `yaml:"name"`
	Description string        `yaml:"description"`
	Seeds       []int64       `yaml:"seeds" check:"ge0"`
	Dataset     DatasetSpec   `yaml:"dataset"`
	Partition   PartitionSpec `yaml:"partition"`
	Model       ModelSpec     `yaml:"model"`
	Train       TrainSpec     `yaml:"train"`
	Methods     []MethodSpec  `yaml:"methods"`
	Grid        yaml.Node     `yaml:"grid"`
	// Shift adds an evaluate-under-shift stage to every run.
	Shift ShiftSpec `yaml:"shift"`
	// Expect records published numbers this manifest reproduces. They never change a
	// stage's key; `fedpipe verify` compares them with the measured figures.
	Expect []Expectation `yaml:"expect"`

	// File is the path the manifest was read from.
	File string `yaml:"-"`
	// Pos maps a field path (e.g. "methods[1].train.lr") to where it was set (a negative
	// line: by the override Overrides[-line-1]).
	Pos map[string]Pos `yaml:"-"`
	// Overrides are the `--set path=value` applied to the file, in order.
	Overrides []string `yaml:"-"`
	// Effective is the manifest as decoded: the file's bytes, or with overrides the YAML
	// tree they were applied to, re-encoded.
	Effective []byte `yaml:"-"`

	limits Limits // what the manifest was checked against (bounds.go)
}

// DatasetSpec names the data. Which fields matter depends on Name.
type DatasetSpec struct {
	// Name is the dataset: fmnist (Fashion-MNIST IDX files), synthetic (Synthetic(α, β),
	// FedProx), or one of the seeds' datasets read from its standard on-disk format
	// (DatasetNames).
	Name string `yaml:"name" check:"oneof=fmnist|synthetic|mnist|emnist|cifar10|cifar100|cifar10c|svhn|medmnist|officehome|miniimagenet|har|femnist"`
	// Variant picks a member of a dataset family: the EMNIST split (balanced, byclass,
	// bymerge, digits, letters, mnist), the MedMNIST subset (e.g. organamnist,
	// organcmnist), the CIFAR-10-C corruption (e.g. gaussian_noise).
	Variant string `yaml:"variant"`
	// Severity is the CIFAR-10-C severity, 1–5.
	Severity int `yaml:"severity" check:"ge0"`
	// ImageSize is the side images are resized to (image folders: OfficeHome,
	// Mini-ImageNet); 0: the dataset's default.
	ImageSize int `yaml:"image_size" check:"ge0"`
	// Fraction, when > 0, keeps a seeded random fraction of the pooled data before
	// partitioning (FedSelect's Mini-ImageNet uses 20%).
	Fraction float64 `yaml:"fraction" check:"unit"`
	// Normalize is how pixels are standardized: dataset (that dataset's channel mean and
	// std, the default), imagenet (ImageNet's, for pretrained models), flbench (FL-bench's
	// constants for the dataset, see FLBenchDataset) or none ([0, 1]).
	Normalize string `yaml:"normalize" check:"oneof=dataset|imagenet|flbench|none"`
	// Path is the directory holding the dataset files (fmnist). Empty: --data,
	// $FEDPIPE_DATA, then the Debian package's location. Not part of any key: the files'
	// digest is.
	Path string `yaml:"path"`
	// MaxSamples, when > 0, keeps a seeded random subset of that many samples of the pooled
	// data before partitioning.
	MaxSamples int `yaml:"max_samples" check:"ge0"`
	// Alpha and Beta are Synthetic(α, β)'s heterogeneity parameters.
	Alpha float64 `yaml:"alpha" check:"ge0"`
	Beta  float64 `yaml:"beta" check:"ge0"`
	// Devices is how many devices Synthetic generates (each its own natural client).
	Devices int `yaml:"devices" check:"gt0"`
	// Features and Classes size Synthetic's inputs and labels (60 and 10 in FedProx).
	Features int `yaml:"features" check:"gt0"`
	Classes  int `yaml:"classes" check:"gt0"`
}

// PartitionSpec says how samples are dealt to clients and split into train and test.
type PartitionSpec struct {
	// Scheme is dirichlet, shards, iid, pathological (classes_per_client classes each, with
	// optional quantity skew; DM-PFL), domain (one client per domain: OfficeHome) or
	// natural (the data's own clients: Synthetic's devices, FEMNIST's writers, HAR's
	// subjects).
	Scheme string `yaml:"scheme" check:"oneof=dirichlet|shards|iid|natural|pathological|domain"`
	// Clients is the number of clients N.
	Clients int `yaml:"clients" check:"gt0"`
	// Alpha is the Dirichlet concentration (dirichlet).
	Alpha float64 `yaml:"alpha" check:"gt0"`
	// MinSamples: dirichlet redraws until every client has at least this many samples.
	MinSamples int `yaml:"min_samples" check:"ge0"`
	// Shards is the number of label-sorted shards per client (shards).
	Shards int `yaml:"shards" check:"gt0"`
	// SamplesPerClient is each client's sample count (shards; 0 = deal out all data).
	SamplesPerClient int `yaml:"samples_per_client" check:"ge0"`
	// ClassesPerClient is how many classes each client holds (pathological).
	ClassesPerClient int `yaml:"classes_per_client" check:"gt0"`
	// QuantitySkew, when > 0, is the fraction of clients that together hold half of the
	// data, the rest holding the other half (pathological; DM-PFL uses 0.9).
	QuantitySkew float64 `yaml:"quantity_skew" check:"unit,lt1"`
	// TestFraction of each client's samples goes to its test split.
	TestFraction float64 `yaml:"test_fraction" check:"unit,lt1"`
	// TestRounding is how test_fraction·n becomes a count: "" or "nearest" rounds to the
	// nearest integer, "floor" rounds down as FL-bench does (int(n·test_ratio),
	// generate_data.py:229 of the FedOBP authors' fork). Either way a client of two or
	// more samples gets at least one test and one training sample.
	TestRounding string `yaml:"test_rounding" check:"oneof=|nearest|floor"`
	// BalanceCap (dirichlet): "" or "true" zeroes, for each class, the share of clients
	// that already hold N_total/N samples (FL-bench, after NIID-Bench); "false" draws the
	// per-class proportions without it (DM-PFL A.1.3, which wants quantity skew).
	BalanceCap string `yaml:"balance_cap" check:"oneof=|true|false"`
	// Draw (dirichlet) is whose random draws deal the samples: "" or "fedpipe" draws from
	// fedpipe's streams (stages/rng); "flbench" replays FL-bench's partition exactly:
	// numpy's global generator seeded with the partition seed (np.random.seed, so seed must
	// lie in [0, 2^32)), FL-bench's order of draws and its test split (a numpy shuffle of
	// each client's samples, the first int(n·test_fraction) for test). It needs
	// balance_cap: false and test_rounding: floor, which is what FL-bench does
	// (stages/partition DirichletFLBench).
	Draw string `yaml:"draw" check:"oneof=|fedpipe|flbench"`
	// ShardMode (shards): random (default) cuts the label-sorted samples into equal shards
	// and deals random shards, so a client may hold two shards of one class and a shard may
	// straddle two classes; class_pure cuts each class into the same number of shards, uses
	// every class equally often and gives each client distinct classes (FedSelect's s = 2);
	// official is class_pure as FedSelect's official code draws it (the class list repeated
	// and shuffled, so a client may draw one class twice).
	ShardMode string `yaml:"shard_mode" check:"oneof=|random|class_pure|official"`
	// TestSource: split (default) holds out test_fraction of each client's samples;
	// official (shards with shard_mode class_pure or official) deals only the official
	// training split and draws each client's test set from the official test split, from
	// the same classes as its shards (FedSelect's official code).
	TestSource string `yaml:"test_source" check:"oneof=|split|official"`
	// TestPerClient (test_source official): test samples per client, split evenly over its
	// shards; 0 gives each client one share of each of its classes' official test samples.
	TestPerClient int `yaml:"test_per_client" check:"ge0"`
	// Population (shards with shard_mode class_pure or official): users the data is
	// partitioned among, of whom clients are drawn at random to form the federation
	// (FedSelect's official code: 100 users, 10 drawn); 0 partitions among clients only.
	Population int `yaml:"population" check:"ge0"`
	// ShardTake (shards with shard_mode class_pure or official): first (default) takes
	// each shard's first samples; official cuts the client's shards, joined in the order
	// drawn, as FedSelect's official code does (utils/sampling.py; see partition.OfficialCut).
	ShardTake string `yaml:"shard_take" check:"oneof=|first|official"`
	// ClassDraw (pathological): cyclic (default) gives client c the shuffled classes
	// (c·s + k) mod C, so only C/s class sets occur; random draws each client's s distinct
	// classes at random (McMahan-style shards, DM-PFL A.1.3).
	ClassDraw string `yaml:"class_draw" check:"oneof=|cyclic|random"`
	// QuantityDraw (pathological with quantity_skew): equal (default) gives every client of
	// a group the same share of its group's half; uniform draws each client's share
	// uniformly, then scales it so each group still holds half (DM-PFL A.1.3: quantities
	// "sampled using a uniform distribution").
	QuantityDraw string `yaml:"quantity_draw" check:"oneof=|equal|uniform"`
	// Seed, when set, seeds the partition stage (the Dirichlet or shard draws, the
	// train/test split, dataset.fraction and max_samples) instead of the run's seed, so
	// every training seed of the manifest shares one partition and one cached partition
	// stage (FL-bench partitions once with its dataset seed and varies only the training
	// seed). Unset: the run's seed, as before. See Run.PartitionSeed.
	Seed *int64 `yaml:"seed" check:"ge0"`
}

// ModelSpec chooses the network.
type ModelSpec struct {
	// Arch is cnn4 (FedOBP's 4-layer CNN, image data), fedavgcnn (FedAvg's CNN, DM-PFL),
	// resnet18 (CIFAR variant: 3×3 stem, no max-pool), resnet18_imagenet (7×7 stem and
	// max-pool, as torchvision and the FedSelect code), mlp or logreg. Default: cnn4 for
	// images, mlp for flat features. The names are package arch's (arch.All; a test keeps
	// this list equal).
	Arch string `yaml:"arch" check:"oneof=cnn4|fedavgcnn|resnet18|resnet18_imagenet|mlp|logreg"`
	// Hidden lists the hidden layer widths of mlp.
	Hidden []int `yaml:"hidden" check:"gt0"`
	// BNStats says what happens to BatchNorm running statistics in federated training:
	// local (never averaged, as the official FedSelect code) or averaged with the weights.
	BNStats string `yaml:"bn_stats" check:"oneof=local|averaged"`
	// BNParams says whether BatchNorm's scale and shift are shared (aggregated like any
	// weight) or personal (kept by each client).
	BNParams string `yaml:"bn_params" check:"oneof=shared|personal"`
	// Init is a file of initial weights (e.g. ImageNet-pretrained ResNet-18); empty: a
	// seeded random initialization. Its content digest, not its path, enters the keys.
	Init string `yaml:"init"`
	// InputChannels 3 repeats a one-channel input to three before a ResNet's stem, as
	// FL-bench's ResNet does for grayscale data (src/utils/models.py:350-354 of the FedOBP
	// authors' fork), so an ImageNet-pretrained stem fits; 0 takes the data's channels.
	InputChannels int `yaml:"input_channels" check:"oneof=0|3"`
}

// HasBatchNorm reports whether the architecture has BatchNorm layers (the ResNet-18s),
// whose training and evaluation modes differ.
func (m ModelSpec) HasBatchNorm() bool {
	return arch.HasBatchNorm(m.Arch)
}

// TrainSpec holds the federated loop's settings. A method's `train:` block overrides any
// of them for that method.
type TrainSpec struct {
	Rounds        int     `yaml:"rounds" check:"gt0"`
	Participation float64 `yaml:"participation" check:"frac"`
	LocalEpochs   int     `yaml:"local_epochs" check:"gt0"`
	BatchSize     int     `yaml:"batch_size" check:"gt0"`
	LR            float64 `yaml:"lr" check:"gt0"`
	Momentum      float64 `yaml:"momentum" check:"unit,lt1"`
	WeightDecay   float64 `yaml:"weight_decay" check:"ge0"`
	// EvalEvery evaluates every client every so many rounds (0: only after the last).
	EvalEvery int `yaml:"eval_every" check:"ge0"`
	// FinetuneEpochs fine-tunes each client's model for so many local epochs before every
	// evaluation (FedOBP's logs use 5); the fine-tuned model is not kept.
	FinetuneEpochs int `yaml:"finetune_epochs" check:"ge0"`
	// EvalTrainSplit also evaluates every client's training split at each evaluation
	// (rows with split "train" in the metrics table, for training curves). No summary,
	// verdict or figure reads them, so it is off by default: it costs a full pass over
	// the training data per evaluation.
	EvalTrainSplit bool `yaml:"eval_train_split"`
	// Augment lists training augmentations applied per (seed, round, client, epoch):
	// crop (random crop after zero padding by crop_padding pixels) and flip (random
	// horizontal flip). Evaluation never augments.
	Augment []string `yaml:"augment" check:"oneof=crop|flip"`
	// CropPadding is the zero padding, in pixels, of the crop augmentation.
	CropPadding int `yaml:"crop_padding" check:"ge0"`
	// CheckpointEvery saves a resume point every so many rounds (0: never). It does not
	// change results, so it is not part of the stage key.
	CheckpointEvery int `yaml:"checkpoint_every" check:"ge0"`
}

// MethodSpec is one entry of `methods:`.
type MethodSpec struct {
	// Name labels the method in tables; unique in the manifest.
	Name string `yaml:"name"`
	// Method is the algorithm (see Methods); defaults to Name.
	Method string `yaml:"method"`
	// Train overrides fields of the manifest's train block for this method.
	Train yaml.Node `yaml:"train"`
	// Params are the method's own parameters (see Methods).
	Params map[string]yaml.Node `yaml:"params"`
	// Grid sweeps fields for this method only: path → list of values.
	Grid yaml.Node `yaml:"grid"`
}

// ShiftSpec lists the test-time shifts each run is evaluated under (DM-PFL): degrees of
// replacement by pooled test data, corruptions generated in Go at severities 1–5 (image
// data only), label shift, and the real CIFAR-10-C corruptions (dataset cifar10 only).
//
// Fields added after the first release carry `omitempty` so that the stage keys of shift
// blocks that do not use them stay what they were.
type ShiftSpec struct {
	Degrees     []float64 `yaml:"degrees" check:"unit"`
	Corruptions []string  `yaml:"corruptions"`
	// Severities are the severities of Corruptions and of CIFAR10C (default: 1–5).
	Severities []int `yaml:"severities"`
	// LabelAlpha lists Dirichlet concentrations of label shift: each client's test class
	// proportions re-drawn from Dir(alpha) (stages/shift.LabelShift).
	LabelAlpha []float64 `yaml:"label_alpha" check:"gt0"`
	// CIFAR10C lists corruptions of the real CIFAR-10-C release (CIFAR10CNames), read from
	// its <corruption>.npy files: each client's test samples are replaced by their
	// CIFAR-10-C versions (stages/shift.CIFAR10CIndices). Results are the shift kind
	// CIFAR10CKind(name) at level = severity.
	CIFAR10C []string `yaml:"cifar10c" json:",omitempty"`
	// CIFAR10CPath is the directory holding the CIFAR-10-C files; empty: --data, then
	// $FEDPIPE_DATA, with their CIFAR-10-C/ and cifar10c/ subfolders, as for datasets. Not
	// part of any key: the files' digest is.
	CIFAR10CPath string `yaml:"cifar10c_path" json:"-"`
}

// Empty reports whether no shift is asked for.
func (s ShiftSpec) Empty() bool {
	return len(s.Degrees) == 0 && len(s.Corruptions) == 0 && len(s.LabelAlpha) == 0 && len(s.CIFAR10C) == 0
}

// CIFAR10CNames lists the corruption files of the CIFAR-10-C release (Hendrycks &
// Dietterich 2019), each <name>.npy: 15 benchmark corruptions and 4 extra ones.
var CIFAR10CNames = []string{"brightness", "contrast", "defocus_blur", "elastic_transform", "fog", "frost",
	"gaussian_blur", "gaussian_noise", "glass_blur", "impulse_noise", "jpeg_compression", "motion_blur",
	"pixelate", "saturate", "shot_noise", "snow", "spatter", "speckle_noise", "zoom_blur"}

// CIFAR10CKind is the shift kind under which the shift stage reports a real CIFAR-10-C
// corruption ("cifar10c:fog"), apart from the Go-generated corruption of the same name.
func CIFAR10CKind(corruption string) string { return "cifar10c:" + corruption }

// CorruptionNames lists the corruptions the shift stage implements (stages/shift; a test
// there keeps the two lists equal).
var CorruptionNames = []string{"brightness", "contrast", "defocus_blur", "fog", "gaussian_noise",
	"impulse_noise", "jpeg", "motion_blur", "pixelate", "shot_noise"}

// Expectation is one published figure: which method, which metric, the value (in percent)
// with its reported spread, the tolerance a reproduction must meet, and where it comes from.
type Expectation struct {
	// Method is the label of one of the manifest's methods.
	Method string `yaml:"method"`
	// Metric names the measured figure it is compared with: accuracy at the final round or
	// the best of the evaluation rounds, as the mean over clients or pooled over all test
	// samples; or a run's cost per client, mean over clients (DM-PFL Table 4): comm_mb (MB
	// up plus down over the run), mb_up, mb_down, flops_1e12 (training FLOPs / 10^12).
	// The accuracy metrics are before fine-tuning (the model the method holds); the same
	// names ending in "_ft" are after fine-tuning a copy for train.finetune_epochs (or the
	// method's own fine-tuning), as FL-bench logs both.
	Metric    string  `yaml:"metric" check:"oneof=final_client_mean|final_pooled|best_client_mean|best_pooled|final_client_mean_ft|final_pooled_ft|best_client_mean_ft|best_pooled_ft|comm_mb|mb_up|mb_down|flops_1e12"`
	Published float64 `yaml:"published" check:"ge0"`
	// Above, instead of a published value, names another method that this one must beat
	// by more than Tolerance points on the same cell (a paper's qualitative claim).
	Above string `yaml:"above"`
	// AboveMetric, when set, is the metric of the Above method (default: Metric), e.g.
	// final_client_mean_ft for a FedAvg+FT baseline whose own figure is after fine-tuning.
	AboveMetric string  `yaml:"above_metric" check:"oneof=|final_client_mean|final_pooled|best_client_mean|best_pooled|final_client_mean_ft|final_pooled_ft|best_client_mean_ft|best_pooled_ft"`
	Std         float64 `yaml:"std" check:"ge0"`
	Tolerance   float64 `yaml:"tolerance" check:"ge0"`
	Source      string  `yaml:"source"`
	Note        string  `yaml:"note"`
	// Deviation records a known difference between fedpipe's measurement and the
	// published number (what is known of its cause, and what was measured, with the
	// command): a cell outside the tolerance is then reported "differs (known: …)" and
	// does not fail verify or CI; it never counts as reproduced.
	Deviation string `yaml:"deviation"`
	// Shift, when set, compares with the shift stage's summary instead of the evaluate
	// stage's: the row of that kind ("degree", "label", a corruption name, or
	// "cifar10c:<name>" for a real CIFAR-10-C corruption) at Level (the
	// degree, the label concentration, or the severity). Only final_client_mean (the
	// row's mean over clients) and final_pooled apply.
	Shift string  `yaml:"shift"`
	Level float64 `yaml:"level" check:"ge0"`
	// Runs is the number of runs the published mean ± std is over, where the paper states
	// it (0: not stated). verify shows it beside the verdict; it changes no verdict and
	// enters no key.
	Runs int `yaml:"runs" check:"ge0"`
}

// DefaultManifest returns the values a manifest starts from before its file is applied.
func defaultManifest() Manifest {
	return Manifest{
		Seeds:     []int64{0},
		Dataset:   DatasetSpec{Alpha: 0.5, Beta: 0.5, Devices: 30, Features: 60, Classes: 10},
		Partition: PartitionSpec{Scheme: "dirichlet", Clients: 10, Alpha: 0.5, MinSamples: 10, Shards: 2, ClassesPerClient: 2, TestFraction: 0.25},
		Model:     ModelSpec{Hidden: []int{200}, BNStats: "local", BNParams: "shared"},
		Train: TrainSpec{Rounds: 10, Participation: 1, LocalEpochs: 1, BatchSize: 32,
			LR: 0.01, EvalEvery: 1, CheckpointEvery: 1, CropPadding: 4},
	}
}

// ErrInvalid wraps every InputError; errors.Is(err, ErrInvalid) tells callers to exit 2.
var ErrInvalid = errors.New("invalid input")

// Is lets errors.Is(err, ErrInvalid) match any InputError.
func (e *InputError) Is(target error) bool { return target == ErrInvalid }

// Options say how a manifest is read: the `--set` overrides applied to its YAML tree
// before decoding ("path=value", see ApplyOverride), and the limits it is checked against.
type Options struct {
	Overrides []string
	Limits    Limits
}

// LoadManifest reads, decodes and validates the manifest at path under DefaultLimits.
func LoadManifest(path string) (*Manifest, error) {
	return LoadManifestOptions(path, Options{Limits: DefaultLimits})
}

// LoadManifestOptions reads, decodes and validates the manifest at path. Only a regular
// file is read ("-" reads standard input), so a FIFO or a device cannot block.
func LoadManifestOptions(path string, opt Options) (*Manifest, error) {
	b, err := readManifestFile(path)
	if err != nil {
		return nil, err
	}
	return ParseManifestOptions(path, b, opt)
}

// ParseManifest decodes and validates manifest bytes under DefaultLimits; file names the
// source in errors.
func ParseManifest(file string, b []byte) (*Manifest, error) {
	return ParseManifestOptions(file, b, Options{Limits: DefaultLimits})
}

// ParseManifestOptions decodes and validates manifest bytes; file names the source in
// errors. The number of cells is counted, and refused over opt.Limits.MaxCells, before
// the grid is expanded.
func ParseManifestOptions(file string, b []byte, opt Options) (*Manifest, error) {
	m, err := parseManifest(file, b, opt.Overrides, opt.Limits)
	if err != nil {
		return nil, overrideError(err, opt.Overrides)
	}
	return m, nil
}

func parseManifest(file string, b []byte, overrides []string, lim Limits) (*Manifest, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &InputError{File: file, Msg: "manifest is empty"}
		}
		return nil, yamlSyntaxError(file, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 || root.Content[0].Tag == "!!null" {
		return nil, &InputError{File: file, Msg: "manifest is empty"}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &InputError{File: file, Line: extra.Line, Msg: "manifest holds more than one YAML document"}
	}
	for i, o := range overrides {
		if root.Content[0].Kind != yaml.MappingNode {
			break // the decoder reports what the file holds instead
		}
		if err := ApplyOverride(root.Content[0], o, i); err != nil {
			return nil, &InputError{File: "--set " + o, Msg: err.Error()}
		}
	}
	m := defaultManifest()
	m.File = file
	m.Pos = map[string]Pos{}
	m.Overrides = overrides
	if len(overrides) > 0 {
		m.Effective = effectiveYAML(&root)
	} else {
		m.Effective = b
	}
	m.limits = lim
	d := &decoder{file: file, pos: m.Pos}
	if err := d.decode(&root, reflect.ValueOf(&m).Elem(), ""); err != nil {
		return nil, err
	}
	if err := m.validate(root.Content[0]); err != nil {
		return nil, err
	}
	if err := m.checkBounds(root.Content[0]); err != nil {
		return nil, err
	}
	if _, err := m.Expand(); err != nil {
		return nil, err
	}
	return &m, nil
}

// yamlSyntaxError turns yaml.v3's "yaml: line N: msg" into an InputError.
func yamlSyntaxError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if _, e := fmt.Sscanf(msg, "line %d:", &line); e == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		// yaml.v3 reports errors raised inside a flow or block collection at the 0-based
		// line where the collection starts; make it 1-based like every other position.
		if strings.HasPrefix(msg, "did not find expected") {
			line++
			msg += " (in the collection that starts on this line)"
		}
	}
	return &InputError{File: file, Line: line, Msg: "YAML syntax: " + msg}
}

// ErrAt returns an InputError at the recorded position of field (or the file if unknown).
func (m *Manifest) ErrAt(field, format string, args ...any) error {
	p := m.Pos[field]
	return overrideError(&InputError{File: m.File, Line: p.Line, Column: p.Column, Field: field, Msg: fmt.Sprintf(format, args...)}, m.Overrides)
}

func (m *Manifest) validate(root *yaml.Node) error {
	if m.Name == "" {
		return &InputError{File: m.File, Line: root.Line, Field: "name", Msg: "missing: every manifest needs a name"}
	}
	if len(m.Seeds) == 0 {
		return m.ErrAt("seeds", "needs at least one seed")
	}
	if m.Dataset.Name == "" {
		return &InputError{File: m.File, Line: root.Line, Field: "dataset.name", Msg: "missing: choose fmnist or synthetic"}
	}
	if len(m.Methods) == 0 {
		if _, set := m.Pos["methods"]; set { // an empty list, in the file or from an override
			return m.ErrAt("methods", "empty: list at least one method (e.g. - name: fedavg)")
		}
		return &InputError{File: m.File, Line: root.Line, Field: "methods", Msg: "missing: list at least one method (e.g. - name: fedavg)"}
	}
	seen := map[string]int{}
	for i := range m.Methods {
		ms := &m.Methods[i]
		f := fmt.Sprintf("methods[%d]", i)
		if ms.Name == "" {
			return m.ErrAt(f, "every method needs a name")
		}
		if ms.Method == "" {
			ms.Method = ms.Name
		}
		def, ok := LookupMethod(ms.Method)
		if !ok {
			field, what := f+".method", ms.Method
			if _, set := m.Pos[field]; !set {
				field = f + ".name"
			}
			msg := fmt.Sprintf("unknown method %q (known: %s)", what, strings.Join(MethodNames(), ", "))
			if near := nearest(what, MethodNames()); near != "" {
				msg = fmt.Sprintf("unknown method %q (did you mean %q?)", what, near)
			}
			return m.ErrAt(field, "%s", msg)
		}
		if j, dup := seen[ms.Name]; dup {
			return m.ErrAt(f+".name", "duplicate method name %q (also methods[%d])", ms.Name, j)
		}
		seen[ms.Name] = i
		for name := range ms.Params {
			if _, ok := def.param(name); !ok {
				msg := fmt.Sprintf("method %s has no parameter %q", ms.Method, name)
				if near := nearest(name, def.paramNames()); near != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", near)
				} else if len(def.params) == 0 {
					msg += " (it takes none)"
				} else {
					msg += fmt.Sprintf(" (its parameters: %s)", strings.Join(def.paramNames(), ", "))
				}
				return m.ErrAt(f+".params."+name, "%s", msg)
			}
		}
	}
	for i, c := range m.Shift.Corruptions {
		if !slices.Contains(CorruptionNames, c) {
			msg := fmt.Sprintf("unknown corruption %q (known: %s)", c, strings.Join(CorruptionNames, ", "))
			if near := nearest(c, CorruptionNames); near != "" {
				msg = fmt.Sprintf("unknown corruption %q (did you mean %q?)", c, near)
			}
			return m.ErrAt(fmt.Sprintf("shift.corruptions[%d]", i), "%s", msg)
		}
	}
	for i, c := range m.Shift.CIFAR10C {
		if !slices.Contains(CIFAR10CNames, c) {
			msg := fmt.Sprintf("unknown CIFAR-10-C corruption %q (the release's: %s)", c, strings.Join(CIFAR10CNames, ", "))
			if near := nearest(c, CIFAR10CNames); near != "" {
				msg = fmt.Sprintf("unknown CIFAR-10-C corruption %q (did you mean %q?)", c, near)
			}
			return m.ErrAt(fmt.Sprintf("shift.cifar10c[%d]", i), "%s", msg)
		}
		if j := slices.Index(m.Shift.CIFAR10C, c); j < i {
			return m.ErrAt(fmt.Sprintf("shift.cifar10c[%d]", i), "corruption %q listed twice (also shift.cifar10c[%d])", c, j)
		}
	}
	if m.Shift.CIFAR10CPath != "" && len(m.Shift.CIFAR10C) == 0 {
		return m.ErrAt("shift.cifar10c_path", "no shift.cifar10c corruptions to read from it: list some (e.g. [gaussian_noise, fog]) or remove cifar10c_path")
	}
	if (len(m.Shift.Corruptions) > 0 || len(m.Shift.CIFAR10C) > 0) && len(m.Shift.Severities) == 0 {
		m.Shift.Severities = []int{1, 2, 3, 4, 5}
	}
	for i, sv := range m.Shift.Severities {
		if sv < 1 || sv > 5 {
			return m.ErrAt(fmt.Sprintf("shift.severities[%d]", i), "severity %d outside 1..5", sv)
		}
	}
	if len(m.Shift.Corruptions) > 0 && m.Dataset.Name == "synthetic" {
		return m.ErrAt("shift.corruptions", "corruptions need image data; synthetic has flat features (use shift.degrees)")
	}
	for i, e := range m.Expect {
		f := fmt.Sprintf("expect[%d]", i)
		if _, ok := seen[e.Method]; !ok {
			var labels []string
			for _, ms := range m.Methods {
				labels = append(labels, ms.Name)
			}
			msg := fmt.Sprintf("no method labelled %q in this manifest (methods: %s)", e.Method, strings.Join(labels, ", "))
			if near := nearest(e.Method, labels); near != "" {
				msg = fmt.Sprintf("no method labelled %q in this manifest (did you mean %q?)", e.Method, near)
			}
			return m.ErrAt(f+".method", "%s", msg)
		}
		if e.Metric == "" {
			return m.ErrAt(f, "metric missing: one of final_client_mean, final_pooled, best_client_mean, best_pooled")
		}
		if e.Above != "" {
			if _, ok := seen[e.Above]; !ok {
				return m.ErrAt(f+".above", "no method labelled %q in this manifest", e.Above)
			}
			if e.Above == e.Method {
				return m.ErrAt(f+".above", "a method cannot be compared with itself")
			}
		}
		if err := m.checkShiftExpectation(f, e); err != nil {
			return err
		}
	}
	return nil
}

// checkShiftExpectation checks an expectation's shift selector against the shift block.
func (m *Manifest) checkShiftExpectation(f string, e Expectation) error {
	if e.Shift == "" {
		return nil
	}
	if e.Metric != "final_client_mean" && e.Metric != "final_pooled" {
		return m.ErrAt(f+".metric", "an expectation under shift compares final accuracy: use final_client_mean or final_pooled, got %q", e.Metric)
	}
	var levels []float64
	field := ""
	switch {
	case e.Shift == "degree":
		levels, field = m.Shift.Degrees, "shift.degrees"
	case e.Shift == "label":
		levels, field = m.Shift.LabelAlpha, "shift.label_alpha"
	case slices.Contains(m.Shift.Corruptions, e.Shift) || slices.ContainsFunc(m.Shift.CIFAR10C, func(c string) bool { return CIFAR10CKind(c) == e.Shift }):
		for _, s := range m.Shift.Severities {
			levels = append(levels, float64(s))
		}
		field = "shift.severities"
	default:
		kinds := append([]string(nil), m.Shift.Corruptions...)
		for _, c := range m.Shift.CIFAR10C {
			kinds = append(kinds, CIFAR10CKind(c))
		}
		msg := fmt.Sprintf("no shift %q in this manifest's shift block (degree, label, or one of its corruptions: %s)", e.Shift, strings.Join(kinds, ", "))
		if slices.Contains(m.Shift.CIFAR10C, e.Shift) {
			msg += fmt.Sprintf(" (the real CIFAR-10-C corruption is %q)", CIFAR10CKind(e.Shift))
		}
		return m.ErrAt(f+".shift", "%s", msg)
	}
	for _, l := range levels {
		if l == e.Level {
			return nil
		}
	}
	return m.ErrAt(f+".level", "level %v of shift %q is not in %s %v: add it there or pick one of those", e.Level, e.Shift, field, levels)
}

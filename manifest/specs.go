package manifest

// The specs a manifest is made of (Manifest's fields): data, partition, model, training,
// methods, shifts, expectations.

import (
	"github.com/fedpipe/fedpipe/model/arch"
	"gopkg.in/yaml.v3"
)

// DatasetSpec names the data. Which fields matter depends on Name.
type DatasetSpec struct {
	// Name is the dataset: one registered by stages/data (DatasetNames, DatasetDef), read
	// from its standard on-disk format or generated (Synthetic(α, β), FedProx).
	Name string `yaml:"name" check:"dataset"`
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
	Alpha float64 `yaml:"alpha" check:"ge0" for:"generated"`
	Beta  float64 `yaml:"beta" check:"ge0" for:"generated"`
	// Devices is how many devices Synthetic generates (each its own natural client).
	Devices int `yaml:"devices" check:"gt0" for:"generated"`
	// Features and Classes size Synthetic's inputs and labels (60 and 10 in FedProx).
	Features int `yaml:"features" check:"gt0" for:"generated"`
	Classes  int `yaml:"classes" check:"gt0" for:"generated"`
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
	Alpha float64 `yaml:"alpha" check:"gt0" for:"scheme=dirichlet"`
	// MinSamples: dirichlet redraws until every client has at least this many samples.
	MinSamples int `yaml:"min_samples" check:"ge0" for:"scheme=dirichlet|natural"`
	// Shards is the number of label-sorted shards per client (shards).
	Shards int `yaml:"shards" check:"gt0" for:"scheme=shards"`
	// SamplesPerClient is each client's sample count (shards; 0 = deal out all data).
	SamplesPerClient int `yaml:"samples_per_client" check:"ge0" for:"scheme=shards"`
	// ClassesPerClient is how many classes each client holds (pathological).
	ClassesPerClient int `yaml:"classes_per_client" check:"gt0" for:"scheme=pathological"`
	// QuantitySkew, when > 0, is the fraction of clients that together hold half of the
	// data, the rest holding the other half (pathological; DM-PFL uses 0.9).
	QuantitySkew float64 `yaml:"quantity_skew" check:"unit,lt1" for:"scheme=pathological"`
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
	BalanceCap string `yaml:"balance_cap" check:"oneof=|true|false" for:"scheme=dirichlet"`
	// Draw (dirichlet) is whose random draws deal the samples: "" or "fedpipe" draws from
	// fedpipe's streams (stages/rng); "flbench" replays FL-bench's partition exactly:
	// numpy's global generator seeded with the partition seed (np.random.seed, so seed must
	// lie in [0, 2^32)), FL-bench's order of draws and its test split (a numpy shuffle of
	// each client's samples, the first int(n·test_fraction) for test). It needs
	// balance_cap: false and test_rounding: floor, which is what FL-bench does
	// (stages/partition DirichletFLBench).
	Draw string `yaml:"draw" check:"oneof=|fedpipe|flbench" for:"scheme=dirichlet"`
	// ShardMode (shards): random (default) cuts the label-sorted samples into equal shards
	// and deals random shards, so a client may hold two shards of one class and a shard may
	// straddle two classes; class_pure cuts each class into the same number of shards, uses
	// every class equally often and gives each client distinct classes (FedSelect's s = 2);
	// official is class_pure as FedSelect's official code draws it (the class list repeated
	// and shuffled, so a client may draw one class twice).
	ShardMode string `yaml:"shard_mode" check:"oneof=|random|class_pure|official" for:"scheme=shards"`
	// TestSource: split (default) holds out test_fraction of each client's samples;
	// official (shards with shard_mode class_pure or official) deals only the official
	// training split and draws each client's test set from the official test split, from
	// the same classes as its shards (FedSelect's official code).
	TestSource string `yaml:"test_source" check:"oneof=|split|official" for:"scheme=shards"`
	// TestPerClient (test_source official): test samples per client, split evenly over its
	// shards; 0 gives each client one share of each of its classes' official test samples.
	TestPerClient int `yaml:"test_per_client" check:"ge0" for:"scheme=shards"`
	// Population (shards with shard_mode class_pure or official): users the data is
	// partitioned among, of whom clients are drawn at random to form the federation
	// (FedSelect's official code: 100 users, 10 drawn); 0 partitions among clients only.
	Population int `yaml:"population" check:"ge0" for:"scheme=shards"`
	// ShardTake (shards with shard_mode class_pure or official): first (default) takes
	// each shard's first samples; official cuts the client's shards, joined in the order
	// drawn, as FedSelect's official code does (utils/sampling.py; see partition.OfficialCut).
	ShardTake string `yaml:"shard_take" check:"oneof=|first|official" for:"scheme=shards"`
	// ClassDraw (pathological): cyclic (default) gives client c the shuffled classes
	// (c·s + k) mod C, so only C/s class sets occur; random draws each client's s distinct
	// classes at random (McMahan-style shards, DM-PFL A.1.3).
	ClassDraw string `yaml:"class_draw" check:"oneof=|cyclic|random" for:"scheme=pathological"`
	// QuantityDraw (pathological with quantity_skew): equal (default) gives every client of
	// a group the same share of its group's half; uniform draws each client's share
	// uniformly, then scales it so each group still holds half (DM-PFL A.1.3: quantities
	// "sampled using a uniform distribution").
	QuantityDraw string `yaml:"quantity_draw" check:"oneof=|equal|uniform" for:"scheme=pathological"`
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
	Hidden []int `yaml:"hidden" check:"gt0" for:"arch=mlp"`
	// BNStats says what happens to BatchNorm running statistics in federated training:
	// local (never averaged, as the official FedSelect code) or averaged with the weights.
	BNStats string `yaml:"bn_stats" check:"oneof=local|averaged" for:"batchnorm"`
	// BNParams says whether BatchNorm's scale and shift are shared (aggregated like any
	// weight) or personal (kept by each client).
	BNParams string `yaml:"bn_params" check:"oneof=shared|personal" for:"batchnorm"`
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
	CropPadding int `yaml:"crop_padding" check:"ge0" for:"augment=crop"`
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

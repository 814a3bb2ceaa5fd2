package manifest

import "sort"

// ParamDef declares one method parameter: its name, default and allowed range. A
// parameter with Choices takes one of those words (default: the first); a Text parameter
// takes any string (default empty); otherwise it is a number.
type ParamDef struct {
	Name    string
	Default float64
	// Check uses the rules of the manifest's `check` tags (gt0, ge0, frac, unit, lt1).
	Check   string
	Choices []string
	Text    bool
	Doc     string
}

// IsWord reports whether the parameter takes a string (Choices or Text).
func (p ParamDef) IsWord() bool { return p.Choices != nil || p.Text }

// MethodDef declares a training method known to manifests. The train stage implements it.
type MethodDef struct {
	Name string
	Doc  string
	// Personal is true when each client ends with its own model (evaluated on its own test
	// split); false when every client is evaluated with the one global model.
	Personal bool
	// Features is true when the method works on the model's penultimate features, which
	// the FeatureArchs models expose (all of them today).
	Features bool
	Params   []ParamDef
}

// FeatureArchs lists the architectures whose penultimate features the train stage can
// compute (model.FeatureArchs; a test keeps the two equal).
var FeatureArchs = []string{"cnn4", "fedavgcnn", "resnet18", "resnet18_imagenet", "mlp", "logreg"}

func (d MethodDef) param(name string) (ParamDef, bool) {
	for _, p := range d.Params {
		if p.Name == name {
			return p, true
		}
	}
	return ParamDef{}, false
}

func (d MethodDef) paramNames() []string {
	var s []string
	for _, p := range d.Params {
		s = append(s, p.Name)
	}
	return s
}

// Methods is the catalogue of methods a manifest may name.
var Methods = map[string]MethodDef{
	"fedavg": {Name: "fedavg", Doc: "FedAvg (McMahan et al.): the server averages the sampled clients' models weighted by training-set size; every client is evaluated with the global model.",
		Params: []ParamDef{
			{Name: "uniform_weights", Default: 0, Check: "unit", Doc: "1: average clients with equal weights instead of by training-set size"},
		}},
	"fedselect": {Name: "fedselect", Personal: true,
		Doc: "FedSelect (Tamirisa et al., CVPR 2024): each client grows a mask of personalized entries from its largest updates (GradSelect with LocalAlt); the server averages each entry over the clients that share it.",
		Params: []ParamDef{
			{Name: "variant", Choices: []string{"paper", "official", "v1"}, Doc: "paper: Alg. 1-3 (global growth every round, capped at alpha); official: the authors' code (per-layer growth of weight tensors every grow_every rounds, delta since the last growth, alpha checked before growing); v1: the workshop version (a GradLTN mask search with rewinding every round, then LocalAlt)"},
			{Name: "alpha", Default: 0.5, Check: "unit", Doc: "personalization limit: the largest personalized fraction"},
			{Name: "p", Default: 0, Check: "unit", Doc: "personalization rate: the fraction of shared entries (per layer in the official variant) added per growth; 0: the variant's default, 0.25 for official (the code's --prune_percent 25) and 0.05 otherwise (the papers leave it to an appendix: our choice)"},
			{Name: "lr_personal", Default: 0, Check: "ge0", Doc: "gamma_v, the rate of the personalized pass (0: train.lr)"},
			{Name: "lr_shared", Default: 0, Check: "ge0", Doc: "gamma_u, the rate of the shared pass (0: train.lr)"},
			{Name: "grow_every", Default: 3, Check: "gt0", Doc: "official variant: grow in the rounds whose 0-based index is a positive multiple of this (1-based rounds 4, 7, 10, ... for 3), as the code's round % 3 == 0 and round != 0"},
			{Name: "ltn_iterations", Default: 5, Check: "ge0", Doc: "v1: GradLTN pruning iterations L (5 in the workshop paper)"},
			{Name: "ltn_epochs", Default: 5, Check: "gt0", Doc: "v1: local epochs per GradLTN iteration E (5 in the workshop paper)"},
			{Name: "ltn_return", Choices: []string{"start", "final"}, Doc: "v1: LocalAlt starts from the model before GradLTN (Alg. 1) or from its last iterate"},
			{Name: "fixed_layers", Text: true, Doc: "comma-separated parameter-name prefixes (e.g. classifier, conv1) personalized from the start, with no growth: FedSelect Table 3's single-layer ablations, and FedAlt's fixed split"},
			{Name: "selection", Choices: []string{"largest", "least", "random"}, Doc: "which shared entries become personal: the largest updates (FedSelect), the least-changing (Table 3 ablation), or random ones of the same count"},
		}},
	"feddpa": {Name: "feddpa", Personal: true,
		Doc: "FedDPA, FedOBP's Fisher-based baseline: entries whose empirical Fisher information exceeds their tensor's q-quantile keep the client's value.",
		Params: []ParamDef{
			{Name: "q", Default: 0.4, Check: "unit", Doc: "per-tensor quantile of the Fisher scores (0.4 in FedOBP's runs)"},
		}},
	"fedobp": {Name: "fedobp", Personal: true,
		Doc: "FedOBP: before training, a client keeps its own value at entries whose importance score exceeds the q-quantile and takes the global value elsewhere; the server runs size-weighted FedAvg over the full models.",
		Params: []ParamDef{
			{Name: "q", Default: 0.999705, Check: "unit", Doc: "quantile of the scores above which entries stay personal (official FMNIST value 0.999705)"},
			{Name: "score", Choices: []string{"obp", "obp_v1", "gradient", "fisher"}, Doc: "obp: (theta_c - theta_g)^2; obp_v1: |(theta_c - theta_g) * theta_c|; gradient: |theta after - theta before| of the client's last local training; fisher: mean squared per-sample gradient at theta_c"},
			{Name: "threshold", Choices: []string{"global", "layer"}, Doc: "one quantile over all eligible entries, or one per tensor"},
			{Name: "norm", Choices: []string{"global", "layer", "none"}, Doc: "min-max normalization of the scores over all entries, per tensor, or none"},
			{Name: "cls_only", Default: 0, Check: "unit", Doc: "1: select only within the classifier layer"},
			{Name: "ema", Default: 0, Check: "unit,lt1", Doc: "exponential moving average of a client's raw scores across its participations, normalized after averaging as the official code does (0: off)"},
			{Name: "fisher", Choices: []string{"full", "empirical"}, Doc: "the fisher score: full squares the gradient of the mean training loss (FedOBP Eq. 6); empirical averages squared per-sample gradients (FedDPA's form)"},
		}},
	"local": {Name: "local", Personal: true, Doc: "Local training: each client trains only on its own data and never communicates."},
	"fedprox": {Name: "fedprox", Doc: "FedProx (Li et al.): FedAvg whose local loss adds mu/2 |theta - theta_g|^2 toward the round's global model.",
		Params: []ParamDef{{Name: "mu", Default: 0.01, Check: "ge0", Doc: "proximal weight (0.01 in FL-bench; DM-PFL uses 0.05)"}}},
	"fedper":   {Name: "fedper", Personal: true, Doc: "FedPer (Arivazhagan et al.): personal head (classifier.*), shared body, trained jointly; the server averages the body by training-set size."},
	"lgfedavg": {Name: "lgfedavg", Personal: true, Doc: "LG-FedAvg (Liang et al.): personal body, global head (classifier.*), trained jointly."},
	"fedrep": {Name: "fedrep", Personal: true, Doc: "FedRep (Collins et al.): personal head trained alone first (head_epochs), then the shared body alone (train.local_epochs).",
		Params: []ParamDef{{Name: "head_epochs", Default: 10, Check: "ge0", Doc: "epochs of head-only training per round (FedRep's paper: 10)"}}},
	"fedbabu": {Name: "fedbabu", Personal: true, Doc: "FedBABU (Oh et al.): the head keeps its random initialization during federated training (only the body trains and is averaged); each client fine-tunes the head alone before evaluation.",
		Params: []ParamDef{{Name: "head_epochs", Default: 5, Check: "ge0", Doc: "epochs of head-only fine-tuning before evaluation (our default; replaces train.finetune_epochs)"}}},
	"apfl": {Name: "apfl", Personal: true, Doc: "APFL (Deng et al.): a personal model v and a learned mixing weight alpha per client; evaluated with alpha v + (1 - alpha) w_g.",
		Params: []ParamDef{
			{Name: "alpha", Default: 0.5, Check: "unit", Doc: "initial mixing weight (APFL starts at 0.5)"},
			{Name: "alpha_lr", Default: 0.01, Check: "ge0", Doc: "step size of alpha's updates (0: alpha stays fixed); not fixed by the paper, FL-bench's default"},
		}},
	"dmpfl": {Name: "dmpfl", Personal: true,
		Doc:    "DM-PFL (Zhang et al., KDD 2023): dual masks - a sparse global model and sparse personal models sharing weights where the masks overlap; phase 1 trains the masks (prune/regrow), phase 2 refines the global then the personal weights; clients are evaluated with their personal models.",
		Params: dmpflParams},
	"dmpfl_plus": {Name: "dmpfl_plus", Personal: true,
		Doc:    "DM-PFL+ (Alg. 4): DM-PFL trained the same way, evaluated per sample with the personal or the global model, whichever has the lower output entropy after discounting (1 - cosine similarity of the two outputs) times its base entropy on the client's unshifted data.",
		Params: append(append([]ParamDef(nil), dmpflParams...), ParamDef{Name: "base_entropy", Choices: []string{"train", "test"}, Doc: "data the base entropies BE are measured on: the client's own training data (default; never the data being evaluated) or its unshifted test data"})},
	"feddst": {Name: "feddst",
		Doc: "FedDST (Bibikar et al., AAAI 2022): sparse FedAvg with dynamic masks - clients prune by magnitude and regrow by gradient every readjust_every rounds (cosine-annealed rate), the server aggregates the masks by voting; every client is evaluated with the global sparse model.",
		Params: []ParamDef{
			{Name: "sparsity", Default: 0.5, Check: "unit,lt1", Doc: "S: the fraction of weights inactive (ERK allocation over the weight tensors; biases dense)"},
			{Name: "alpha_s", Default: 0.01, Check: "unit", Doc: "readjustment ratio before annealing (FedDST: 0.01)"},
			{Name: "readjust_every", Default: 10, Check: "gt0", Doc: "rounds between mask readjustments (FedDST: 10)"},
		}},
	"ditto": {Name: "ditto", Personal: true, Doc: "Ditto (Li et al. 2021): FedAvg for the global model, plus a personal model per client trained with lambda/2 |v - theta_g|^2; clients are evaluated with their personal models.",
		Params: []ParamDef{{Name: "lambda", Default: 0.1, Check: "ge0", Doc: "proximal weight of the personal objective"}}},
	"lotteryfl": {Name: "lotteryfl", Personal: true,
		Doc: "LotteryFL (Li et al. 2020): each client magnitude-prunes its own subnetwork while its local accuracy clears a threshold, rewinding the survivors to the initial model; the server averages each entry over the clients whose masks keep it; clients are evaluated with their sparse models.",
		Params: []ParamDef{
			{Name: "prune_rate", Default: 0.2, Check: "unit", Doc: "fraction of each weight tensor's remaining weights pruned per pruning step (our default)"},
			{Name: "target_sparsity", Default: 0.5, Check: "unit,lt1", Doc: "pruned fraction per weight tensor at which pruning stops (0: never prune: FedAvg with personal evaluation)"},
			{Name: "acc_threshold", Default: 0.5, Check: "ge0", Doc: "a client prunes only when its subnetwork's accuracy on its training data is at least this"},
			{Name: "rewind", Choices: []string{"init", "none"}, Doc: "after pruning, reset the surviving weights to the initial model (the lottery-ticket reset of LotteryFL's Alg. 1) or keep the downloaded values"},
		}},
	"fedala": {Name: "fedala", Personal: true, Features: true,
		Doc: "FedALA (Zhang et al., AAAI 2023): before local training each client mixes the global model into its own element-wise on the top layers, with weights W in [0, 1] learned on a random sample of its data; the lower layers take the global model; size-weighted FedAvg on the server.",
		Params: []ParamDef{
			{Name: "eta", Default: 1.0, Check: "ge0", Doc: "learning rate of W (1.0 in the paper; 0 keeps W = 1, i.e. FedAvg's starting point)"},
			{Name: "rand_percent", Default: 80, Check: "gt0", Doc: "s: percentage of local training data sampled to learn W (80 in the paper)"},
			{Name: "layer_idx", Default: 1, Check: "gt0", Doc: "p: number of top layers (weight and bias) adapted element-wise; the layers below take the global model"},
			{Name: "threshold", Default: 0.1, Check: "ge0", Doc: "first adaptation: train W until the std of the last num_pre_loss batch losses is below this (the authors' code)"},
			{Name: "num_pre_loss", Default: 10, Check: "gt0", Doc: "window of batch losses for the convergence test (the authors' code)"},
			{Name: "max_init_epochs", Default: 20, Check: "gt0", Doc: "cap on the passes of the first adaptation (our choice; the code has none)"},
		}},
	"pfedfda": {Name: "pfedfda", Personal: true, Features: true,
		Doc: "pFedFDA (McLaughlin et al., CVPR 2024): shared feature extractor; each client's head is the LDA classifier of class-conditional Gaussian estimates of its features (tied covariance), interpolated with the global estimates by a per-client beta; the body trains with that head fixed.",
		Params: []ParamDef{
			{Name: "beta_mode", Choices: []string{"cv", "fixed"}, Doc: "cv: each client picks beta from {0, 0.25, 0.5, 0.75, 1} by 2-fold cross-validation on its features after training (the paper fits beta per client); fixed: beta for every client"},
			{Name: "beta", Default: 0.5, Check: "unit", Doc: "weight of the local estimates against the global ones: the value before a client's first cross-validated choice, or always with beta_mode fixed"},
			{Name: "shrinkage", Default: 0.1, Check: "unit", Doc: "s in (1 - s) Sigma + s tr(Sigma)/d I + ridge I, the covariance regularization (our form and default)"},
			{Name: "ridge", Default: 0.1, Check: "ge0", Doc: "absolute ridge added to the covariance's diagonal (our default): keeps the head's scale tied to the features' and the body's training stable"},
		}},
	"fedpac": {Name: "fedpac", Personal: true, Features: true,
		Doc: "FedPAC (Xu et al., ICLR 2023): shared body trained with feature alignment to the global class centroids (lambda), personal heads trained first each round; the server combines heads per client with weights from a variance-bias quadratic program over the clients' feature statistics.",
		Params: []ParamDef{
			{Name: "lambda", Default: 1.0, Check: "ge0", Doc: "weight of the feature-alignment term (1.0 in the paper)"},
			{Name: "head_epochs", Default: 1, Check: "ge0", Doc: "epochs of head-only training before the body (1 in the paper)"},
		}},
	"floco": {Name: "floco", Personal: true,
		Doc: "FLOCO (Grinwald et al., NeurIPS 2024): the classifier is a solution simplex of M endpoints trained by sampling a point per batch; from round tau each client samples within a ball around its own point, placed by a projection of its update signature; shared body; evaluated at the client's point.",
		Params: []ParamDef{
			{Name: "endpoints", Default: 3, Check: "gt0", Doc: "M, the simplex's endpoints (our default; 1 is FedAvg)"},
			{Name: "tau", Default: 50, Check: "gt0", Doc: "round from which clients get subregions (our default)"},
			{Name: "rho", Default: 0.1, Check: "gt0", Doc: "radius of a client's subregion around its point"},
		}},
	"flute": {Name: "flute", Personal: true, Features: true,
		Doc: "FLUTE (Liu et al., ICML 2024): shared body, personal heads; the head trains first with neural-collapse regularizers (NC2: its Gram matrix toward a simplex ETF over the client's classes; NC3: toward the class-mean features), then the body with its features pulled toward the scaled head columns.",
		Params: []ParamDef{
			{Name: "lambda_nc2", Default: 1.0, Check: "ge0", Doc: "weight of the head's ETF-geometry term (our default)"},
			{Name: "lambda_nc3", Default: 0.1, Check: "ge0", Doc: "weight of the head-feature alignment terms (our default)"},
			{Name: "head_epochs", Default: 1, Check: "ge0", Doc: "epochs of head-only training per round before the body"},
		}},
}

// dmpflParams are DM-PFL's and DM-PFL+'s training parameters.
var dmpflParams = []ParamDef{
	{Name: "sparsity", Default: 0.5, Check: "unit,lt1", Doc: "S: the fraction of weights inactive in every mask (ERK allocation over the weight tensors; biases dense); 0.5 in the paper"},
	{Name: "alpha_s", Default: 0.01, Check: "unit", Doc: "readjustment ratio: the fraction of a client's active weights pruned and regrown (unstated in the paper; FedDST's 0.01)"},
	{Name: "readjust_every", Default: 10, Check: "gt0", Doc: "a client readjusts its mask at every so many of its phase-1 participations (Alg. 1 readjusts inside the client loop; the interval is unstated in the paper: FedDST's 10)"},
	{Name: "readjust_by_round", Default: 0, Check: "unit", Doc: "1: readjust in the rounds whose number is a multiple of readjust_every instead (fedpipe's earlier schedule)"},
	{Name: "iterations", Default: 1, Check: "ge0", Doc: "iterations of the two phases: T is cut into 2n equal blocks alternating phase 1 and phase 2 (Fig. 5e-f); 0 = phase 1 only; 1 is our default"},
	{Name: "share_threshold", Default: 0.3, Check: "unit", Doc: "the global mask ignores positions active in no more than this fraction of the sampled clients' masks (30% in the paper)"},
}

// MethodNames lists the known methods, sorted.
func MethodNames() []string {
	var s []string
	for n := range Methods {
		s = append(s, n)
	}
	sort.Strings(s)
	return s
}

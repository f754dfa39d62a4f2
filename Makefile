# stabpriv: private classifiers from stable SGD.
GO      ?= go
DATA    ?= ../shared/datasets
OUT     ?= out

.PHONY: run test vet lint bench paper build

# A private release (gamma noise, eps = 1) of a classifier of the embedded
# default data set (Wisconsin breast cancer), with its certificate.
run:
	$(GO) run ./cmd/stabpriv train --mechanism gamma --epsilon 1 --out $(OUT)/model.json

# The whole test suite (under 10 minutes on 2 cores), then the packages
# with assembly kernels on the other builds whose bits they promise: the Go
# loops (purego), GOAMD64=v3 (where the compiler may fuse products) and a
# processor reported without AVX (math.Exp's other path).
KERNEL_PKGS = ./internal/kernel/ ./glm/ ./objpert/ ./trainer/
test: vet
	$(GO) test -count=1 -timeout 9m ./...
	cd beam && $(GO) test -count=1 ./...
	$(GO) test -count=1 -tags purego $(KERNEL_PKGS)
	GOAMD64=v3 $(GO) test -count=1 $(KERNEL_PKGS)
	GODEBUG=cpu.avx=off $(GO) test -count=1 $(KERNEL_PKGS)

vet:
	$(GO) vet ./...

# staticcheck, pinned (the module proxy serves tagged versions only).
lint: vet
	GOFLAGS= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.6.1 ./...

build:
	$(GO) build ./...

# Go benchmarks of the hot paths (-count 6, for benchstat), and the
# side-by-side table with scikit-learn and pandas (bench/compare.sh: whole
# one-epoch fits, Train's fixed cost, peak memory, epochs at b = 1, 32, 256,
# ReadCSV, the truncated SVD, a private fit on Adult from $(DATA)/adult;
# min and median of alternating rounds) into $(OUT)/sidebyside.md. The
# table is skipped when python3-sklearn or python3-pandas is missing.
bench:
	@mkdir -p $(OUT)
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./trainer/ | tee $(OUT)/bench.txt
	OUT=$(OUT) ADULT=$(DATA)/adult bash bench/compare.sh

# The paper's experiments on the shared data sets (DATA): for adult, lastfm
# and gene_all, the accuracy sweep (Figures 1 and 2, gamma-norm noise) and the
# feature selection (Figures 3 and 5) into $(OUT)/paper/<dataset>/, and for
# adult also the analytic Gaussian sweep at delta = 1e-5 into
# $(OUT)/paper/adult/gaussian-analytic/. Progress is logged to stderr; each
# sweep prints its table of the best mean accuracy per eps.
PAPER_SETS ?= adult lastfm gene_all
# The knob sweep of the README's Privacy-utility table: every lambda with
# every clipping norm, l1 ratio and averaging choice, five mechanisms side
# by side, and the private selection on 10% of the training rows.
KNOB_FLAGS ?= --mechanism gamma,laplace,gaussian-analytic,objective,amp --delta 1e-5 \
	--lambdas 1e-5,2.1544e-5,4.6416e-5,1e-4,2.1544e-4,4.6416e-4,1e-3,2.1544e-3,4.6416e-3,1e-2 \
	--clips 0,0.5,0.2,0.1,0.05 --l1-ratios 0.15,0 --average false,true --select-val 0.1 --fixed-scale -1
paper:
	@mkdir -p $(OUT)/paper
	$(GO) build -o $(OUT)/paper/stabpriv ./cmd/stabpriv
	@for ds in $(PAPER_SETS); do \
		echo "== $$ds: sweep (Figures 1 and 2)"; \
		$(OUT)/paper/stabpriv sweep --dataset $$ds --data-dir $(DATA) --out $(OUT)/paper/$$ds || exit 1; \
		echo "== $$ds: feature selection (Figures 3 and 5)"; \
		$(OUT)/paper/stabpriv featsel --dataset $$ds --data-dir $(DATA) --out $(OUT)/paper/$$ds || exit 1; \
	done
	@echo "== adult: sweep with the analytic Gaussian mechanism, delta = 1e-5"
	$(OUT)/paper/stabpriv sweep --dataset adult --data-dir $(DATA) --mechanism gaussian-analytic --delta 1e-5 \
		--out $(OUT)/paper/adult/gaussian-analytic
	@echo "== adult: knob sweep (privacy-utility frontier, pure and (eps, delta) mechanisms, private selection)"
	$(OUT)/paper/stabpriv sweep --dataset adult --data-dir $(DATA) $(KNOB_FLAGS) --out $(OUT)/paper/adult/knobs
	@echo "== breast cancer (embedded): knob sweep"
	$(OUT)/paper/stabpriv sweep --dataset csv --data datasets/data/wdbc.csv --label diagnosis $(KNOB_FLAGS) \
		--lambdas 1e-3,3e-3,1e-2,3e-2,1e-1,3e-1,1 --out $(OUT)/paper/breast_cancer/knobs

# The nested module beam/ (Apache Beam pipeline, its own go.mod): build the
# stabpriv-beam command, run its tests (Beam's ptest on the direct runner),
# and the benchmark (2M rows x 20 features on the embedded runner, and the
# Adult accuracy of P = 1, 4, 8, 16 against the centralized fit).
.PHONY: beam test-beam beam-bench
beam:
	cd beam && $(GO) vet ./... && $(GO) build -o $(abspath $(OUT))/stabpriv-beam ./cmd/stabpriv-beam

test-beam:
	cd beam && $(GO) test -count=1 ./...

beam-bench:
	cd beam && $(GO) run ./bench --adult $(abspath $(DATA))/adult

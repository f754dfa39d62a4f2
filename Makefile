# stabpriv: private classifiers from stable SGD.
GO      ?= go
DATA    ?= ../shared/datasets
OUT     ?= out

.PHONY: run test vet bench bench-compare paper build

# Train on the embedded default data set (Wisconsin breast cancer).
run:
	$(GO) run ./cmd/stabpriv train --out $(OUT)/model.json

# The whole test suite (under 10 minutes on 2 cores).
test: vet
	$(GO) test -count=1 -timeout 9m ./...

vet:
	$(GO) vet ./...

build:
	$(GO) build ./...

# Go benchmarks of the hot paths, and the side-by-side comparison with
# scikit-learn (skipped when python3-sklearn is missing).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./trainer/ | tee $(OUT)/bench.txt
	bash bench/compare.sh

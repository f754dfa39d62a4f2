package perturb

// registry lists the mechanisms in the order shown to users. Adding a
// mechanism is one file implementing Noise, Statement and Tuning and one
// line here; the
// conformance tests (conformance_test.go, and featsel's for the marginal
// law) then run on it.
var registry = []mechanism{
	laplaceNoise{},
	gammaNormNoise{},
	gaussianNoise{},
	analyticGaussianNoise{},
}

// Package forecast says, before any row is read, whether a private release
// is expected to be useful: Predict compares the expected norm of the noise
// with the largest weights the run can produce (each release method's
// Tuner.NoiseRatio, package release), for the public values alone (the
// number of training rows, the model's inputs, the loss, the classes and
// the budget), so a forecast costs no privacy.
//
// A Forecast names the method with the smallest ratio, its level (Useless
// at 1 or more: near chance whatever the data; Weak at 0.4 or more), a
// warning to print before training, and advice: the changes of the public
// settings that would bring the ratio below Weak (more eps, a delta, more
// rows, fewer inputs). PredictIn words the advice in the caller's settings
// (Terms: the release's part of the eps given, the shares spent before it,
// the setting that fixes the number of inputs).
package forecast

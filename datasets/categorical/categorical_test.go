package categorical

import (
	"errors"
	"reflect"
	"testing"
)

func TestOneHotEncoder(t *testing.T) {
	enc, err := FitOneHot([]string{"color", "size"}, [][]string{{"red", "L"}, {"blue", "S"}, {"red", "M"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"color=blue", "color=red", "size=L", "size=M", "size=S"}
	if got := enc.FeatureNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("FeatureNames = %v, want %v", got, want)
	}
	dst := make([]float64, enc.Width())
	if err := enc.Encode(dst, []string{"red", "S"}); err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 1, 0, 0, 1}; !reflect.DeepEqual(dst, want) {
		t.Errorf("Encode = %v, want %v", dst, want)
	}
	if err := enc.Encode(dst, []string{"green", "S"}); !errors.Is(err, ErrUnknownCategory) {
		t.Errorf("unknown category: err = %v", err)
	}
	if err := enc.Encode(dst, []string{"red"}); err == nil {
		t.Error("short row: no error")
	}
	if _, err := FitOneHot([]string{"a"}, [][]string{{"x", "y"}}); err == nil {
		t.Error("ragged fit rows: no error")
	}
}
func TestEncodeClassNames(t *testing.T) {
	tests := []struct {
		name     string
		in       []string
		positive string
		y        []float64
		classes  []string
		wantErr  bool
	}{
		{name: "binary default second sorted", in: []string{"T", "B", "B"}, y: []float64{1, -1, -1}, classes: []string{"B", "T"}},
		{name: "binary positive first", in: []string{"T", "B"}, positive: "B", y: []float64{-1, 1}, classes: []string{"T", "B"}},
		{name: "numeric order", in: []string{"10", "9", "10"}, y: []float64{1, -1, 1}, classes: []string{"9", "10"}},
		{name: "multiclass", in: []string{"c", "a", "b"}, y: []float64{2, 0, 1}, classes: []string{"a", "b", "c"}},
		{name: "one class", in: []string{"a", "a"}, wantErr: true},
		{name: "unknown positive", in: []string{"a", "b"}, positive: "c", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, classes, err := EncodeClasses(tc.in, tc.positive)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(y, tc.y) || !reflect.DeepEqual(classes, tc.classes) {
				t.Errorf("got %v %q, want %v %q", y, classes, tc.y, tc.classes)
			}
		})
	}
}

package trainer

import (
	"context"
	"errors"
)

func runNative(ctx context.Context, p *problem) ([]float64, error) {
	return nil, errors.New("trainer: native engine not implemented")
}

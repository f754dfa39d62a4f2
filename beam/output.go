package stabbeam

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/stabpriv/stabpriv/cmd/outfile"
	"github.com/stabpriv/stabpriv/internal/safefile"
)

// ErrOutput is wrapped by every refusal of the output location (--out),
// all found before the pipeline runs.
var ErrOutput = errors.New("stabbeam: bad output")

// isURL reports whether name is a URL of a Beam file system (scheme://...)
// rather than a local path.
func isURL(name string) bool { return strings.Contains(name, "://") }

// newFS returns Beam's file system for name. A scheme whose file system
// panics while it starts (the s3 file system does when the AWS
// configuration cannot be loaded) is an error.
func newFS(ctx context.Context, name string) (fsys filesystem.Interface, err error) {
	defer func() {
		if r := recover(); r != nil {
			fsys, err = nil, fmt.Errorf("the file system of %s failed to start: %v", name, r)
		}
	}()
	return filesystem.New(ctx, name)
}

// CheckOutput checks, before the pipeline runs, that the model file can be
// written at out: a local path that is not one of the inputs (the shard
// files), whose directory exists (or can be made) and takes a new file,
// that is not a directory, a link or a device, and that does not exist
// unless force (the rule of stabpriv train --out, cmd/outfile); or a
// URL of a registered file system (gs://, s3://, memfs://) that is not an
// input, where a probe object can be written and removed, and where no
// object exists unless force. Errors wrap ErrOutput.
func CheckOutput(ctx context.Context, out string, force bool, inputs ...string) error {
	if out == "" {
		return fmt.Errorf("%w: no model file to write (--out)", ErrOutput)
	}
	if !isURL(out) {
		rep := outfile.Keep
		if force {
			rep = outfile.AnyFile
		}
		var local []string
		for _, in := range inputs {
			if !isURL(in) {
				local = append(local, in)
			}
		}
		if err := outfile.CheckFile("--out", out, rep, local...); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		return nil
	}
	if slices.Contains(inputs, out) {
		return fmt.Errorf("%w: --out %s is also an input of the pipeline; give another path", ErrOutput, out)
	}
	fsys, err := newFS(ctx, out)
	if err != nil {
		return fmt.Errorf("%w: --out %s: %w", ErrOutput, out, err)
	}
	defer fsys.Close()
	if strings.HasSuffix(out, "/") {
		return fmt.Errorf("%w: --out %s names a directory; give the model file's name", ErrOutput, out)
	}
	if _, err := fsys.Size(ctx, out); err == nil && !force {
		return fmt.Errorf("%w: --out %s exists; give another name (or --force to replace it)", ErrOutput, out)
	}
	probe := out + ".stabpriv-probe"
	w, err := fsys.OpenWrite(ctx, probe)
	if err == nil {
		_, err = w.Write([]byte("probe\n"))
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("%w: --out %s is not writable: %w", ErrOutput, out, err)
	}
	if rm, ok := fsys.(filesystem.Remover); ok {
		if err := rm.Remove(ctx, probe); err != nil {
			return fmt.Errorf("%w: --out %s: removing the probe %s: %w", ErrOutput, out, probe, err)
		}
	}
	return nil
}

// writeFile writes b to name through Beam's file systems: a local file
// appears whole or not at all (a temporary file renamed into place), and
// without force never replaces a file (safefile.New: of concurrent runs to
// one new path one writes it, the others fail), unless that file holds b
// already (a retried sink writing the committed release again); an object
// of gs:// or s3:// is committed whole when its writer closes (CheckOutput
// refused an existing one before the run; the file systems offer no write
// that fails on an object that appeared since).
func writeFile(ctx context.Context, name string, b []byte, force bool) error {
	if !isURL(name) {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		mode := safefile.New
		if force {
			mode = safefile.Replace
		}
		err := safefile.WriteBytes(name, 0o644, mode, b)
		if errors.Is(err, safefile.ErrExists) && bytes.Equal(safefile.Head(name, len(b)+1), b) {
			return nil
		}
		return err
	}
	fsys, err := newFS(ctx, name)
	if err != nil {
		return err
	}
	defer fsys.Close()
	w, err := fsys.OpenWrite(ctx, name)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// readFile reads name through Beam's file systems.
func readFile(ctx context.Context, name string) ([]byte, error) {
	fsys, err := newFS(ctx, name)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	rc, err := fsys.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var buf bytes.Buffer
	_, err = io.Copy(&buf, rc)
	return buf.Bytes(), err
}

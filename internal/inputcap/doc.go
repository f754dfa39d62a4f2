// Package inputcap reads input files under stated caps: on their bytes,
// on the length of a line and on the number of lines, checked before what
// is read is held. A reader of one kind of input (a data CSV, a bounds
// file, a model file) states its Caps, opens its file with Open, which
// refuses a regular file larger than the byte cap from its size before a
// byte is read, and reads through NewReader (or ReadAll), which stops a
// stream (a FIFO, /dev/stdin, /dev/zero) at the first cap it passes. So
// an input that is too large, or endless, is refused in bounded time and
// memory, with an error that names the input, the cap and the line.
//
// The caps of every input of stabpriv are listed in docs/GUIDE.md
// ("Input limits"); each is an exported constant of the package that
// reads that input.
package inputcap

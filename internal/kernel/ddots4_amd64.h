// DDOTS4STEP multiplies four elements of w (from DI) with those of the four
// rows at R8..R11 (element index AX) and adds the products to the partial
// sums of gonum's Ddot, one register a row (Y8..Y11); Y0..Y4 are scratch.
#define DDOTS4STEP \
	VMOVUPD (DI)(AX*8), Y4 \
	VMULPD  (R8)(AX*8), Y4, Y0 \
	VMULPD  (R9)(AX*8), Y4, Y1 \
	VMULPD  (R10)(AX*8), Y4, Y2 \
	VMULPD  (R11)(AX*8), Y4, Y3 \
	VADDPD  Y0, Y8, Y8 \
	VADDPD  Y1, Y9, Y9 \
	VADDPD  Y2, Y10, Y10 \
	VADDPD  Y3, Y11, Y11

# The code coup places in a process's vDSO to skew its clocks. It is
# position-independent and assembled at offset 0 of the block it lives in,
# which coup writes into the unused tail of the vDSO's last page. coup
# turns the first instructions of __vdso_clock_gettime, __vdso_gettimeofday
# and __vdso_time into jumps to the hooks below; the process's own code
# (Go's runtime, glibc) calls those functions and lands here.
#
# Regenerate hook.go's bytes after a change: go test -run TestHookBytes
# -update ./internal/clockfault/ (it needs GNU as and objcopy).
#
# Every hook calls the real clock_gettime through tramp (its displaced
# first instructions, then a jump back into it), then skews what it got:
#
#     t' = anchor + (t - anchor) * rate + offset
#
# for the class of the clock read (realtime or monotonic), with rate a
# 32.32 fixed-point number. The parameters sit in two slots; gen picks one
# (gen & 1), and coup changes them by writing the other slot and then gen,
# so a reader never sees half an update (it rereads gen after reading and
# starts again when it moved).
	.text
	.globl	block
block:
magic:	.ascii	"coupclk1"		# 0x00: marks a patched vDSO
gen:	.quad	0			# 0x08
slots:	.fill	12, 8, 0		# 0x10: 2 slots x {realtime, monotonic} x {anchor, offset, rate}
counts:	.quad	0			# 0x70: address of the read counters (0: none)
	.quad	0			# 0x78: reserved
	.balign	16
tramp:	.fill	48, 1, 0xcc		# 0x80: displaced instructions, jmp back (written by coup)

# int clock_gettime(clockid_t id, struct timespec *ts)
	.balign	16

hook_clock_gettime:
	push	%rdi
	push	%rsi
	sub	$8, %rsp		# the stack aligned for the call
	call	tramp
	add	$8, %rsp
	pop	%rsi
	pop	%rdi
	test	%eax, %eax
	jnz	9f			# an error: nothing to skew
	cmp	$9, %edi
	ja	9f			# CPU-time clocks, TAI: left alone
	mov	$0x121, %edx		# REALTIME 0, REALTIME_COARSE 5, REALTIME_ALARM 8
	bt	%edi, %edx
	jc	1f
	mov	$0x2d2, %edx		# MONOTONIC 1, MONOTONIC_RAW 4, MONOTONIC_COARSE 6, BOOTTIME 7, BOOTTIME_ALARM 9
	bt	%edi, %edx
	jnc	9f
	mov	$24, %r8d		# the monotonic class's parameters
	jmp	2f
1:	xor	%r8d, %r8d		# the realtime class's
2:	imul	$1000000000, (%rsi), %rax
	add	8(%rsi), %rax		# t in nanoseconds
	call	skew
	xor	%edx, %edx
	mov	$1000000000, %ecx
	div	%rcx
	mov	%rax, (%rsi)
	mov	%rdx, 8(%rsi)
	xor	%eax, %eax
9:	ret

# skew: %rax = t, %r8 = the class's offset in a slot; returns t' in %rax
# (never below zero). Clobbers %rcx, %rdx, %r9, %r10, %r11.
skew:
	push	%rbx
	push	%rsi
	mov	%rax, %r11		# the true time
	mov	$8, %r10d		# rereads before taking what was read
3:	mov	gen(%rip), %r9
	mov	%r9, %rcx
	and	$1, %ecx
	imul	$48, %rcx, %rcx
	lea	slots(%rip), %rdx
	add	%rcx, %rdx
	add	%r8, %rdx		# %rdx: {anchor, offset, rate}
	mov	(%rdx), %rbx
	mov	8(%rdx), %rsi
	mov	16(%rdx), %rcx
	mov	%r11, %rax
	sub	%rbx, %rax
	imul	%rcx			# %rdx:%rax = (t - anchor) * rate
	shrd	$32, %rdx, %rax
	add	%rbx, %rax
	add	%rsi, %rax
	cmp	gen(%rip), %r9
	je	4f			# no update came while it read
	dec	%r10d
	jnz	3b
4:	test	%rax, %rax
	jns	5f
	xor	%eax, %eax
5:	mov	counts(%rip), %rcx	# count the read, and keep what it saw
	test	%rcx, %rcx
	jz	6f
	add	%r8, %rcx
	lock incq (%rcx)
	mov	%r11, 8(%rcx)
	mov	%rax, %rdx
	sub	%r11, %rdx
	mov	%rdx, 16(%rcx)
6:	pop	%rsi
	pop	%rbx
	ret

# int gettimeofday(struct timeval *tv, struct timezone *tz)
	.balign	16

hook_gettimeofday:
	push	%rbx
	push	%r12
	sub	$24, %rsp
	mov	%rdi, %rbx
	mov	%rsi, %r12
	test	%r12, %r12
	jz	1f
	xor	%edi, %edi		# the time zone, from the kernel
	mov	%r12, %rsi
	mov	$96, %eax		# SYS_gettimeofday
	syscall
	test	%rax, %rax
	jnz	9f
1:	xor	%eax, %eax
	test	%rbx, %rbx
	jz	9f
	xor	%edi, %edi		# CLOCK_REALTIME
	mov	%rsp, %rsi
	call	hook_clock_gettime
	test	%eax, %eax
	jnz	9f
	mov	(%rsp), %rax
	mov	%rax, (%rbx)
	mov	8(%rsp), %rax
	xor	%edx, %edx
	mov	$1000, %ecx
	div	%rcx
	mov	%rax, 8(%rbx)
	xor	%eax, %eax
9:	add	$24, %rsp
	pop	%r12
	pop	%rbx
	ret

# time_t time(time_t *t)
	.balign	16

hook_time:
	push	%rbx
	sub	$16, %rsp
	mov	%rdi, %rbx
	xor	%edi, %edi		# CLOCK_REALTIME
	mov	%rsp, %rsi
	call	hook_clock_gettime
	mov	(%rsp), %rax
	test	%rbx, %rbx
	jz	1f
	mov	%rax, (%rbx)
1:	add	$16, %rsp
	pop	%rbx
	ret
	.balign	16

end:

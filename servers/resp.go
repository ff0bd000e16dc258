package servers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// respConn is one connection to a Redis server or a Sentinel, speaking
// RESP2, Redis's protocol: a command is an array of bulk strings, and a
// reply one value. What a server answers is under suspicion: a reply is
// read within bounds (respMaxBulk, respMaxArray, respMaxDepth,
// respMaxReply), and anything else is an error of the connection.
type respConn struct {
	c net.Conn
	r *bufio.Reader
}

// The bounds of one reply: a set's members (SMEMBERS) are one array.
const (
	respMaxBulk  = 1 << 20  // bytes of one bulk string
	respMaxArray = 1 << 17  // elements of one array
	respMaxDepth = 4        // arrays within arrays
	respMaxReply = 32 << 20 // bytes of a whole reply, 16 counted for each value besides its text
)

// respValue is one reply: a simple string ('+'), an error ('-'), an
// integer (':'), a bulk string ('$') or an array ('*'); Null for a null
// bulk string or array.
type respValue struct {
	Kind byte
	Str  string // a simple string's, an error's or a bulk string's text
	Int  int64
	Arr  []respValue
	Null bool
}

// errRESP is a reply that breaks the protocol or its bounds.
var errRESP = errors.New("not a RESP reply")

// dialRESP connects to addr within ctx, with dial (nil: net.Dialer's).
func dialRESP(ctx context.Context, dial dialFunc, addr string) (*respConn, error) {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &respConn{c: c, r: bufio.NewReader(c)}, nil
}

// do sends one command and reads its reply, within ctx. An error reply
// is a value (Kind '-'), not an error: the server answered.
func (c *respConn) do(ctx context.Context, args ...string) (respValue, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	c.c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.c.Write(respCommand(args)); err != nil {
		return respValue{}, err
	}
	return readReply(c.r)
}

func (c *respConn) close() { c.c.Close() }

// respCommand is a command as RESP writes it: an array of bulk strings.
func respCommand(args []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

// readReply reads one reply within respMaxReply.
func readReply(r *bufio.Reader) (respValue, error) {
	budget := respMaxReply
	return readRESP(r, 0, &budget)
}

// readRESP reads one value, at depth in arrays, and takes what it reads
// from budget.
func readRESP(r *bufio.Reader, depth int, budget *int) (respValue, error) {
	if *budget -= 16; *budget < 0 {
		return respValue{}, fmt.Errorf("%w: a reply of more than %d bytes", errRESP, respMaxReply)
	}
	line, err := readLine(r)
	if err != nil {
		return respValue{}, err
	}
	if len(line) == 0 {
		return respValue{}, fmt.Errorf("%w: an empty line", errRESP)
	}
	v := respValue{Kind: line[0]}
	rest := line[1:]
	switch v.Kind {
	case '+', '-':
		v.Str = rest
		return v, nil
	case ':':
		v.Int, err = strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return v, fmt.Errorf("%w: integer %q", errRESP, rest)
		}
		return v, nil
	case '$':
		n, err := strconv.Atoi(rest)
		switch {
		case err != nil || n < -1:
			return v, fmt.Errorf("%w: bulk length %q", errRESP, rest)
		case n == -1:
			v.Null = true
			return v, nil
		case n > respMaxBulk:
			return v, fmt.Errorf("%w: a bulk string of %d bytes, more than %d", errRESP, n, respMaxBulk)
		case n > *budget:
			return v, fmt.Errorf("%w: a reply of more than %d bytes", errRESP, respMaxReply)
		}
		*budget -= n
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return v, err
		}
		if string(buf[n:]) != "\r\n" {
			return v, fmt.Errorf("%w: a bulk string not ended by CRLF", errRESP)
		}
		v.Str = string(buf[:n])
		return v, nil
	case '*':
		n, err := strconv.Atoi(rest)
		switch {
		case err != nil || n < -1:
			return v, fmt.Errorf("%w: array length %q", errRESP, rest)
		case n == -1:
			v.Null = true
			return v, nil
		case n > respMaxArray:
			return v, fmt.Errorf("%w: an array of %d elements, more than %d", errRESP, n, respMaxArray)
		case depth >= respMaxDepth:
			return v, fmt.Errorf("%w: arrays nested deeper than %d", errRESP, respMaxDepth)
		}
		for range n {
			e, err := readRESP(r, depth+1, budget)
			if err != nil {
				return v, err
			}
			v.Arr = append(v.Arr, e)
		}
		return v, nil
	}
	return v, fmt.Errorf("%w: type %q", errRESP, v.Kind)
}

// readLine reads a line ended by CRLF, of at most 64 KiB, without it.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > 64<<10 {
			return "", fmt.Errorf("%w: a line longer than 64 KiB", errRESP)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return "", err
		}
	}
	if len(b) < 2 || b[len(b)-2] != '\r' {
		return "", fmt.Errorf("%w: a line not ended by CRLF", errRESP)
	}
	return string(b[:len(b)-2]), nil
}

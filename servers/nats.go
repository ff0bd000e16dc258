package servers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/workloads"
)

// natsSet is the set workload's client of NATS JetStream (client =
// "nats"), over nats.go, NATS's own client library: each client process
// has a connection of its own to the member its operations name, at the
// address its host reaches it by (placement.go), and is told of no other
// server (IgnoreDiscoveredServers, and the preset's no_advertise), so
// that it never leaves the member coup gave it.
//
//	add    publish the element to coup.set (coup.<prefix>set in a
//	       session's episode), with the message id <prefix>set-<element>
//	       (JetStream drops a second copy of an id within two minutes),
//	       and wait for JetStream's acknowledgement (PubAck): add_ok once
//	       the stream's leader has the message committed by a quorum
//	read   every message of the subject, from the first, through an
//	       ordered consumer (the stream's own copy, as its leader holds
//	       it), after the heal: the elements, in increasing order
//
// The stream (scenario.NatsStream, on every node) is made once the
// servers accept connections, before the cluster is watched for its
// leader (natsSetUp), so that there is a leader to see.
type natsSet struct {
	addr   map[string]string // node → host:port of its client port
	prefix string
	// dial is how the client's host dials (nil: the library's own).
	dial dialFunc

	mu     sync.Mutex
	conns  map[string]*natsConn // by client process
	closed bool
}

var _ opClient = (*natsSet)(nil)

// natsConn is a client process's connection.
type natsConn struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	node string
}

// The client's timings: how long a connection may take to set up, and
// how often it pings (a connection whose pings go unanswered twice, a
// member cut off by a stalled link, is closed, and the next operation
// connects anew).
const (
	natsConnectTimeout = time.Second
	natsPingEvery      = time.Second
)

func newNatsSet(addr map[string]string, prefix string) *natsSet {
	return &natsSet{addr: addr, prefix: prefix, conns: map[string]*natsConn{}}
}

// subject is where the client's elements are published.
func (c *natsSet) subject() string { return "coup." + c.prefix + "set" }

// natsConnect connects to the member at addr as the named client,
// dialling with dial (nil: as coup itself does).
func natsConnect(addr, name string, dial dialFunc) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.IgnoreDiscoveredServers(), nats.NoReconnect(),
		nats.Timeout(natsConnectTimeout), nats.PingInterval(natsPingEvery), nats.MaxPingsOutstanding(2),
		nats.NoCallbacksAfterClientClose()}
	if dial != nil {
		opts = append(opts, nats.SetCustomDialer(natsDialer{dial}))
	}
	return nats.Connect("nats://"+addr, opts...)
}

// natsDialer dials as a host does (nats.CustomDialer), within the
// connection's timeout.
type natsDialer struct{ dial dialFunc }

func (d natsDialer) Dial(network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), natsConnectTimeout)
	defer cancel()
	return d.dial(ctx, network, addr)
}

// conn is the connection of a client process to its member.
func (c *natsSet) conn(process, node string) (*natsConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("%w: the client is closed", errDefinite)
	}
	if s, ok := c.conns[process]; ok && s.node == node && !s.nc.IsClosed() {
		return s, nil
	}
	if s, ok := c.conns[process]; ok {
		s.nc.Close()
		delete(c.conns, process)
	}
	addr, ok := c.addr[node]
	if !ok {
		return nil, fmt.Errorf("%w: no node %q", errDefinite, node)
	}
	nc, err := natsConnect(addr, process, c.dial)
	if err != nil {
		return nil, fmt.Errorf("%w: connect to %s: %v", errDefinite, node, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %v", errDefinite, err)
	}
	s := &natsConn{nc: nc, js: js, node: node}
	c.conns[process] = s
	return s, nil
}

// Do carries out an add or the read of the set; its answer names the
// member the client is connected to (served_by: its server_name).
func (c *natsSet) Do(ctx context.Context, node string, op workloads.Op) ([]byte, error) {
	f, element, ok := setOpOf(op)
	if !ok {
		return nil, fmt.Errorf("%w: the nats client carries the set workload, not %q", errDefinite, op.F)
	}
	s, err := c.conn(op.Process, node)
	if err != nil {
		return nil, err
	}
	var body []byte
	if f == workloads.FAdd {
		v := strconv.FormatInt(element, 10)
		ack, perr := s.js.Publish(ctx, c.subject(), []byte(v), jetstream.WithMsgID(c.prefix+"set-"+v), jetstream.WithExpectStream(scenario.NatsStream))
		body, err = natsAddAnswer(ack, perr)
	} else {
		body, err = c.read(ctx, s)
	}
	return withServedBy(body, s.nc.ConnectedServerName()), err
}

// natsAddAnswer is a publish's answer: add_ok for JetStream's
// acknowledgement by the stream. A publish that no stream heard (no
// responders, after the library's own retries) or that the stream
// refused (an API error: it did not store the message) surely did not
// happen; any other error (no acknowledgement in time, a connection that
// broke) leaves it unknown.
func natsAddAnswer(ack *jetstream.PubAck, err error) ([]byte, error) {
	var api *jetstream.APIError
	switch {
	case err == nil && ack != nil && ack.Stream == scenario.NatsStream:
		return answer("add_ok", nil), nil
	case err == nil:
		return nil, fmt.Errorf("an acknowledgement by another stream: %+v", ack)
	case errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrNoResponders):
		return nil, fmt.Errorf("%w: no stream heard the publish: %v", errDefinite, err)
	case errors.As(err, &api):
		return nil, fmt.Errorf("%w: the stream refused the publish: %v", errDefinite, err)
	}
	return nil, err
}

// natsReadBatch is how many messages one fetch of the read asks for, and
// natsReadWait how long it waits for the first of them.
const (
	natsReadBatch = 500
	natsReadWait  = 2 * time.Second
)

// read reads every message of the client's subject.
func (c *natsSet) read(ctx context.Context, s *natsConn) ([]byte, error) {
	stream, err := s.js.Stream(ctx, scenario.NatsStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		// The stream the client made is gone (a power failure took
		// back its placement): it holds no element.
		return setAnswer(nil, nil), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the stream's info: %v", errDefinite, err)
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(c.subject()))
	if err != nil {
		return nil, fmt.Errorf("%w: the stream's info: %v", errDefinite, err)
	}
	want := info.State.Subjects[c.subject()]
	var datas [][]byte
	if want > 0 {
		cons, err := s.js.OrderedConsumer(ctx, scenario.NatsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{c.subject()}})
		if err != nil {
			return nil, fmt.Errorf("%w: an ordered consumer: %v", errDefinite, err)
		}
		for done := false; !done; {
			// A fetch returns once it has its batch, or after its wait:
			// never more than what remains, so that the last does not
			// wait.
			batch, err := cons.Fetch(int(min(natsReadBatch, max(1, want-uint64(len(datas))))), jetstream.FetchMaxWait(natsReadWait))
			if err != nil {
				return nil, fmt.Errorf("%w: fetch: %v", errDefinite, err)
			}
			n := 0
			for m := range batch.Messages() {
				n++
				datas = append(datas, m.Data())
				if md, err := m.Metadata(); err == nil && md.NumPending == 0 {
					done = true
				}
			}
			if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
				return nil, fmt.Errorf("%w: fetch: %v", errDefinite, err)
			}
			if n == 0 {
				return nil, fmt.Errorf("%w: the stream gave no message in %s, with %d read of the %d it holds", errDefinite, natsReadWait, len(datas), want)
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %v", errDefinite, ctx.Err())
			}
		}
	}
	return natsSetAnswer(datas), nil
}

// natsSetAnswer is the read_ok of the messages read: each an element
// (its decimal text), or, when it is not one, its text.
func natsSetAnswer(datas [][]byte) []byte {
	var elems []int64
	var others []string
	for _, d := range datas {
		if e, err := strconv.ParseInt(string(d), 10, 64); err == nil {
			elems = append(elems, e)
		} else {
			others = append(others, string(d))
		}
	}
	return setAnswer(elems, others)
}

// close ends every connection.
func (c *natsSet) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, s := range c.conns {
		s.nc.Close()
	}
	c.conns = map[string]*natsConn{}
}

// natsSetUp makes the stream (scenario.NatsStream, its subjects
// scenario.NatsSubjects, on every node, in files) through the first
// node's own client port, once the servers accept connections: JetStream
// places a stream only once its meta group has a leader, so the request
// is made again, every 250ms, until it is placed or ctx ends (the
// cluster's start_timeout). A stream made already (a restart, a
// Session's cluster) is left as it is.
func natsSetUp(ctx context.Context, r *run) error {
	ctx, cancel := context.WithTimeout(ctx, r.sv.StartTimeout.D)
	defer cancel()
	first := r.layout.nodes[0]
	var dial dialFunc
	if r.net != nil {
		dial = r.dialer(first.ID) // from inside its namespace, on coup's network
	}
	cfg := jetstream.StreamConfig{Name: scenario.NatsStream, Subjects: []string{scenario.NatsSubjects},
		Replicas: len(r.layout.nodes), Storage: jetstream.FileStorage}
	start := time.Now()
	var last error
	for {
		if last = natsCreateStream(ctx, first.Addr["client"], dial, cfg); last == nil {
			r.logf("the stream %s (R%d) was placed after %s", cfg.Name, cfg.Replicas, time.Since(start).Round(time.Millisecond))
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the nats client could not make its stream %s on %d servers within %s (start_timeout): %v", cfg.Name, cfg.Replicas, r.sv.StartTimeout.D, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// natsCreateStream asks the member at addr once to make the stream.
func natsCreateStream(ctx context.Context, addr string, dial dialFunc, cfg jetstream.StreamConfig) error {
	nc, err := natsConnect(addr, "coup-setup", dial)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = js.CreateStream(actx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return nil
	}
	return err
}

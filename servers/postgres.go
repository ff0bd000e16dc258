package servers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/workloads"
)

// pgKV is the client of PostgreSQL under Patroni (client = "postgres"),
// for the set and lin-kv workloads, over pgx, a Go driver of
// PostgreSQL's own protocol. It connects as an application behind
// Patroni does, with no proxy of its own between: one connection string
// names every host (the member the client is bound to first, then the
// others in order) with target_session_attrs=read-write, so that pgx
// tries each in turn, each within pgConnectTimeout, and keeps the first
// that is out of recovery (SHOW transaction_read_only answers off). A
// client process keeps its connection for its later operations, and
// drops it after any error but a statement the server refused, so that
// the next operation connects anew, to whichever host is then the
// primary. Every statement is one autocommit transaction, acknowledged
// once PostgreSQL answers its commit (with synchronous replication, once
// a synchronous standby has it too):
//
//	set add     INSERT INTO coup_set (prefix, element) … ON CONFLICT DO NOTHING
//	set read    SELECT element FROM coup_set WHERE prefix = …, the elements in order
//	kv read     SELECT value FROM coup_kv WHERE prefix = … AND key = …
//	kv write    INSERT INTO coup_kv … ON CONFLICT (prefix, key) DO UPDATE
//	kv cas      an UPDATE … WHERE value = from, and whether the key exists, in one statement
//
// prefix is "" in a run of its own (a Session's episode's keys apart
// from the others'). The tables are made once the servers are up
// (pgSetUp). Every answer names the host whose PostgreSQL served it.
type pgKV struct {
	addr   map[string]string // node → host:port of its PostgreSQL
	names  map[string]string // host:port → node
	order  []string          // the nodes, in order
	prefix string
	// dial is how the client's host dials (nil: net.Dialer's).
	dial dialFunc

	mu     sync.Mutex
	conns  map[string]*pgx.Conn // idle, by client process
	closed bool
}

var _ opClient = (*pgKV)(nil)

// The preset's superuser, as its patroni.yml makes it, and the
// database; how long one host may take to connect (a host cut off by
// stalls answers nothing: the next is tried after it).
const (
	pgUser           = "postgres"
	pgPassword       = "coup-postgres"
	pgDatabase       = "postgres"
	pgConnectTimeout = 500 * time.Millisecond
)

// The statements of the workloads, and of the tables' making.
const (
	pgTables = `CREATE TABLE IF NOT EXISTS coup_set (prefix text NOT NULL, element bigint NOT NULL, PRIMARY KEY (prefix, element));
CREATE TABLE IF NOT EXISTS coup_kv (prefix text NOT NULL, key integer NOT NULL, value bigint NOT NULL, PRIMARY KEY (prefix, key))`
	pgSetAdd  = `INSERT INTO coup_set (prefix, element) VALUES ($1, $2) ON CONFLICT DO NOTHING`
	pgSetRead = `SELECT element FROM coup_set WHERE prefix = $1 ORDER BY element`
	pgKVRead  = `SELECT value FROM coup_kv WHERE prefix = $1 AND key = $2`
	pgKVWrite = `INSERT INTO coup_kv (prefix, key, value) VALUES ($1, $2, $3) ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value`
	pgKVCas   = `WITH u AS (UPDATE coup_kv SET value = $4 WHERE prefix = $1 AND key = $2 AND value = $3 RETURNING 1)
SELECT (SELECT count(*) FROM u), EXISTS (SELECT 1 FROM coup_kv WHERE prefix = $1 AND key = $2)`
)

// newPgKV is the client of the nodes whose PostgreSQL it dials at addr.
func newPgKV(addr map[string]string, prefix string) *pgKV {
	c := &pgKV{addr: addr, names: map[string]string{}, prefix: prefix, conns: map[string]*pgx.Conn{}}
	for n, a := range addr {
		c.order = append(c.order, n)
		c.names[a] = n
	}
	slices.SortFunc(c.order, func(a, b string) int { // n2 before n10
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	})
	return c
}

// connString is the connection string of a client bound to node: every
// host, node's first.
func (c *pgKV) connString(node, process string) string {
	hosts := []string{c.addr[node]}
	for _, n := range c.order {
		if n != node {
			hosts = append(hosts, c.addr[n])
		}
	}
	q := url.Values{"sslmode": {"disable"}, "target_session_attrs": {"read-write"}, "application_name": {process}}
	return "postgres://" + url.UserPassword(pgUser, pgPassword).String() + "@" + strings.Join(hosts, ",") + "/" + pgDatabase + "?" + q.Encode()
}

// connect connects a client process, bound to node, to the first host
// that takes writes. An error is definite: nothing was sent.
func (c *pgKV) connect(ctx context.Context, node, process string) (*pgx.Conn, error) {
	if _, ok := c.addr[node]; !ok {
		return nil, fmt.Errorf("%w: no node %q", errDefinite, node)
	}
	cfg, err := pgConfig(c.connString(node, process), c.dial)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDefinite, err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: no host took writes: %v", errDefinite, err)
	}
	return conn, nil
}

// pgConfig reads a connection string, and dials with dial (nil: as coup
// itself does); each host within pgConnectTimeout; every statement in
// the simple protocol (one round trip, nothing prepared).
func pgConfig(conn string, dial dialFunc) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(conn)
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = pgConnectTimeout
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	cfg.DialFunc = pgconn.DialFunc(dial)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return cfg, nil
}

// Do carries out an operation on the primary the client process is
// connected to, connecting it first when it has no connection.
func (c *pgKV) Do(ctx context.Context, node string, op workloads.Op) ([]byte, error) {
	c.mu.Lock()
	conn, closed := c.conns[op.Process], c.closed
	delete(c.conns, op.Process) // the operation's own while it lasts
	c.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%w: the client is closed", errDefinite)
	}
	if conn == nil || conn.IsClosed() {
		var err error
		if conn, err = c.connect(ctx, node, op.Process); err != nil {
			return nil, err
		}
	}
	served := conn.PgConn().Conn().RemoteAddr().String()
	if n, ok := c.names[served]; ok {
		served = n
	}
	body, err := c.do(ctx, conn, op)
	if err != nil {
		err = pgOutcome(err)
	}
	c.mu.Lock()
	keep := !c.closed && (err == nil || pgRefused(err))
	if keep {
		c.conns[op.Process] = conn
	}
	c.mu.Unlock()
	if !keep {
		closeCtx, cancel := context.WithTimeout(context.Background(), pgConnectTimeout)
		conn.Close(closeCtx)
		cancel()
	}
	if err != nil {
		return nil, fmt.Errorf("at %s: %w", served, err)
	}
	return withServedBy(body, served), nil
}

// do sends the operation's statement and reads its answer.
func (c *pgKV) do(ctx context.Context, conn *pgx.Conn, op workloads.Op) ([]byte, error) {
	if sf, element, ok := setOpOf(op); ok {
		if sf == workloads.FAdd {
			if _, err := conn.Exec(ctx, pgSetAdd, c.prefix, element); err != nil {
				return nil, err
			}
			return answer("add_ok", nil), nil // added, or there already: an add whose answer was lost
		}
		rows, err := conn.Query(ctx, pgSetRead, c.prefix)
		if err != nil {
			return nil, err
		}
		elems, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, err
		}
		return setAnswer(elems, nil), nil
	}
	f, err := fieldsOf(op)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDefinite, err)
	}
	switch op.F {
	case workloads.FRead:
		var v int64
		err := conn.QueryRow(ctx, pgKVRead, c.prefix, f.Key).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return answerError(20, "key does not exist"), nil
		}
		if err != nil {
			return nil, err
		}
		return answer("read_ok", []byte(strconv.FormatInt(v, 10))), nil
	case workloads.FWrite:
		if _, err := conn.Exec(ctx, pgKVWrite, c.prefix, f.Key, f.Value); err != nil {
			return nil, err
		}
		return answer("write_ok", nil), nil
	case workloads.FCas:
		var updated int64
		var exists bool
		if err := conn.QueryRow(ctx, pgKVCas, c.prefix, f.Key, f.From, f.To).Scan(&updated, &exists); err != nil {
			return nil, err
		}
		switch {
		case updated == 1:
			return answer("cas_ok", nil), nil
		case !exists:
			return answerError(20, "key does not exist"), nil
		}
		return answerError(22, "the value is not "+strconv.Itoa(f.From)), nil
	}
	return nil, fmt.Errorf("%w: the postgres client does not do %q", errDefinite, op.F)
}

// pgOutcome says whether an operation's error leaves it undone
// (errDefinite) or unknown. Undone: nothing was sent (pgx says it is
// safe to retry), or the server refused the statement with an ERROR,
// which aborts an autocommit transaction before its commit. Unknown:
// anything else: no answer in time, a connection that broke, or a FATAL
// (the backend ended, as a demotion's shutdown ends it), which may come
// after the commit was written (a commit waiting for a synchronous
// standby is committed locally already).
func pgOutcome(err error) error {
	var pg *pgconn.PgError
	switch {
	case errors.As(err, &pg) && pg.Severity == "ERROR":
		return &pgRefusedError{pg}
	case pgconn.SafeToRetry(err):
		return fmt.Errorf("%w: nothing was sent: %v", errDefinite, err)
	}
	return err
}

// pgRefusedError is a statement the server refused: definite, and the
// connection is kept (read_only_sql_transaction aside: a primary demoted
// under it, and the next operation must find the new one).
type pgRefusedError struct{ pg *pgconn.PgError }

func (e *pgRefusedError) Error() string {
	return fmt.Sprintf("refused: %s (SQLSTATE %s)", e.pg.Message, e.pg.Code)
}
func (e *pgRefusedError) Unwrap() error { return errDefinite }

// pgRefused is whether an error is a refusal that keeps the connection.
func pgRefused(err error) bool {
	var r *pgRefusedError
	return errors.As(err, &r) && r.pg.Code != "25006"
}

// close closes every idle connection; one still in use is closed when
// its operation ends.
func (c *pgKV) close() {
	c.mu.Lock()
	c.closed = true
	conns := c.conns
	c.conns = map[string]*pgx.Conn{}
	c.mu.Unlock()
	for _, conn := range conns {
		ctx, cancel := context.WithTimeout(context.Background(), pgConnectTimeout)
		conn.Close(ctx)
		cancel()
	}
}

// pgSetUp makes the workloads' tables once the servers accept
// connections, through the first node's host, on whichever host takes
// writes: Patroni bootstraps its primary after its REST API answers, so
// the making is tried again, every 250ms, until it is done or ctx ends
// (the cluster's start_timeout). Tables made already (a restart, a
// Session's cluster) are left as they are.
func pgSetUp(ctx context.Context, r *run) error {
	ctx, cancel := context.WithTimeout(ctx, r.sv.StartTimeout.D)
	defer cancel()
	first := r.layout.nodes[0].ID
	var dial dialFunc
	if r.net != nil {
		dial = r.dialer(first)
	}
	c := newPgKV(pgPorts(r.reachFrom(first)), "")
	c.dial = dial
	start := time.Now()
	var last error
	for {
		if last = c.makeTables(ctx, first); last == nil {
			r.logf("the postgres client's tables were made after %s", time.Since(start).Round(time.Millisecond))
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the postgres client could not make its tables within %s (start_timeout): %v", r.sv.StartTimeout.D, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// makeTables connects once and makes the tables.
func (c *pgKV) makeTables(ctx context.Context, node string) error {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := c.connect(actx, node, "coup-setup")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(actx, pgTables)
	return err
}

// pgPorts is where each node's PostgreSQL is reached (its port
// "postgres", the Patroni preset's sidecar's).
func pgPorts(addrs map[string]map[string]string) map[string]string {
	out := map[string]string{}
	for id, ports := range addrs {
		if a, ok := ports[scenario.PostgresPort]; ok {
			out[id] = a
		}
	}
	return out
}

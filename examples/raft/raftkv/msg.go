package raftkv

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/coupharness/coup"
)

// Msg is a raft message as a coup message body: the raftpb.Message in
// protobuf's encoding, which JSON writes in base64. A machine never
// shares a raft message with another: it encodes what it sends and
// decodes what it receives, as it would over a network.
type Msg struct {
	Data []byte `json:"data"`
}

// Type names the body by the raft message's type ("MsgApp",
// "MsgHeartbeat", ...), so that histories and reports count each kind:
// the type is the encoding's first field (1, a varint), which protobuf
// writes first.
func (m Msg) Type() string {
	if len(m.Data) >= 2 && m.Data[0] == 0x08 && m.Data[1] < 0x80 {
		return pb.MessageType(m.Data[1]).String()
	}
	return "raft"
}

// messages are a Msg of every raft message type, for Node.Messages: a
// real node decodes a body by its type.
func messages() []coup.Msg {
	var out []coup.Msg
	for t := range pb.MessageType_name {
		if t >= 0 && t < 0x80 {
			out = append(out, Msg{Data: []byte{0x08, byte(t)}})
		}
	}
	return out
}

// encode is a raft message as a body.
func encode(m *pb.Message) Msg {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("raftkv: encode %s: %v", m.GetType(), err)) // raft's own messages always encode
	}
	return Msg{Data: b}
}

// decode is the raft message a body carries.
func decode(m Msg) (*pb.Message, error) {
	var rm pb.Message
	if err := proto.Unmarshal(m.Data, &rm); err != nil {
		return nil, fmt.Errorf("decode a raft message: %w", err)
	}
	return &rm, nil
}

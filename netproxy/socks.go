package netproxy

import (
	"bufio"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"
)

// SOCKS5 (RFC 1928) reply codes.
const (
	socksOK           = 0
	socksNotAllowed   = 2
	socksHostUnreach  = 4
	socksCmdUnsupp    = 7
	socksAddrUnsupp   = 8
	socksNoAuth       = 0
	socksUserPass     = 2
	socksNoAcceptable = 0xff
)

// socks serves one SOCKS5 CONNECT (RFC 1928; user and password, RFC
// 1929, when Credential is set). BIND and UDP ASSOCIATE are refused.
func (s *Server) socks(c net.Conn, br *bufio.Reader) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	want := byte(socksNoAuth)
	if s.Credential != "" {
		want = socksUserPass
	}
	offered := false
	for _, m := range methods {
		offered = offered || m == want
	}
	if !offered {
		c.Write([]byte{5, socksNoAcceptable})
		return
	}
	c.Write([]byte{5, want})
	if want == socksUserPass && !s.socksAuth(c, br) {
		return
	}
	c.SetReadDeadline(time.Time{})
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[0] != 5 {
		return
	}
	host, err := socksAddr(br, req[3])
	if err != nil {
		socksReply(c, socksAddrUnsupp)
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return
	}
	port := int(binary.BigEndian.Uint16(pb[:]))
	if req[1] != 1 {
		socksReply(c, socksCmdUnsupp)
		return
	}
	up, ev, err := s.connect("socks5", host, port)
	if err != nil {
		code := byte(socksNotAllowed)
		var r *refusal
		if !errors.As(err, &r) || r.unreachable() {
			code = socksHostUnreach
		}
		socksReply(c, code)
		return
	}
	if socksReply(c, socksOK) != nil {
		s.untrack(up)
		up.Close()
		s.emit(ev)
		return
	}
	s.relay(c, br, up, ev)
}

func (s *Server) socksAuth(c net.Conn, br *bufio.Reader) bool {
	read := func() ([]byte, bool) {
		n, err := br.ReadByte()
		if err != nil {
			return nil, false
		}
		b := make([]byte, n)
		_, err = io.ReadFull(br, b)
		return b, err == nil
	}
	if v, err := br.ReadByte(); err != nil || v != 1 {
		return false
	}
	u, ok1 := read()
	p, ok2 := read()
	got := append(append(u, ':'), p...)
	if !ok1 || !ok2 || subtle.ConstantTimeCompare(got, []byte(s.Credential)) != 1 {
		c.Write([]byte{1, 1})
		return false
	}
	c.Write([]byte{1, 0})
	return true
}

func socksAddr(br *bufio.Reader, atyp byte) (string, error) {
	switch atyp {
	case 1:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return "", err
		}
		return netip.AddrFrom4(b).String(), nil
	case 4:
		var b [16]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return "", err
		}
		return netip.AddrFrom16(b).Unmap().String(), nil
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", err
		}
		return string(b), nil
	}
	return "", errors.New("address type not supported")
}

func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
	return err
}

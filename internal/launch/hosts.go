package launch

import (
	"net"
	"strconv"
	"strings"
)

// hostKey is what two host spellings that reach the same machine have in
// common: names compare without case or a final dot, and addresses by
// value, IPv6 with or without brackets, IPv4 in every form the C
// resolver accepts ("127.1" is 127.0.0.1).
func hostKey(h string) string {
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if ip := parseIP(h); ip != nil {
		zone := ""
		if i := strings.IndexByte(h, '%'); i >= 0 {
			zone = h[i:]
		}
		return ip.String() + zone
	}
	return h
}

// parseIP parses h as an IPv6 address (zone dropped) or as an IPv4
// address in any of inet_aton's forms, which getaddrinfo, and with it
// torchrun's TCPStore, accepts: "a.b.c.d", "a.b.c", "a.b", "a", each part
// decimal, octal (leading 0) or hex (0x).
func parseIP(h string) net.IP {
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i]
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return nil
	}
	var v uint64
	for i, s := range parts {
		n, ok := atonPart(s)
		// Every part but the last is one byte; the last fills the rest.
		limit := uint64(255)
		if i == len(parts)-1 {
			limit = 1<<(8*(4-i)) - 1
		}
		if !ok || n > limit {
			return nil
		}
		if i == len(parts)-1 {
			v = v<<(8*(4-i)) | n
		} else {
			v = v<<8 | n
		}
	}
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func atonPart(s string) (uint64, bool) {
	base := 10
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" || strings.ContainsAny(s, "+-") {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 32)
	return n, err == nil
}

// loopbackNames are the names /etc/hosts of common distributions gives
// 127.0.0.1 and ::1.
var loopbackNames = map[string]bool{
	"localhost": true, "localhost.localdomain": true,
	"localhost4": true, "localhost4.localdomain4": true,
	"localhost6": true, "localhost6.localdomain6": true,
	"ip6-localhost": true, "ip6-loopback": true,
}

// isLoopback reports whether a master address cannot be reached from
// another machine: the localhost names, 127.0.0.0/8 and ::1 in any
// spelling, and the unspecified addresses 0.0.0.0 and ::.
func isLoopback(h string) bool {
	k := hostKey(h)
	if loopbackNames[k] || strings.HasSuffix(k, ".localhost") {
		return true
	}
	ip := parseIP(k)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

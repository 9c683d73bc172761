package launch

// The checks of the hosts, the master address and the port that Build
// reports as diagnostics.

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// checkPort returns the master port of o, reporting one outside 1-65535.
func checkPort(d *diag.List, o Options) int {
	const hint = "use a free TCP port in 1-65535, such as 29500"
	if o.MasterPortText == "" {
		if o.MasterPort < 1 || o.MasterPort > 65535 {
			d.Add(diag.RuleInvalidPort, diag.Pos{}, "", hint, "master port %d is outside 1-65535", o.MasterPort)
		}
		return o.MasterPort
	}
	text := strings.TrimSpace(o.MasterPortText)
	if digits := strings.TrimPrefix(text, "-"); digits == "" || strings.Trim(digits, "0123456789") != "" {
		d.Add(diag.RuleInvalidPort, diag.Pos{}, "", hint, "master port %q is not a number in 1-65535", o.MasterPortText)
		return 0
	}
	port, err := strconv.Atoi(text)
	if err != nil || port < 1 || port > 65535 {
		d.Add(diag.RuleInvalidPort, diag.Pos{}, "", hint, "master port %s is outside 1-65535", text)
		return 0
	}
	return port
}

// hostName is what a host may look like: a DNS name, an IPv4 address, or
// an IPv6 address (bracketed or not, with an optional %zone).
// It may not start with '-', which ssh or srun would take for an option.
var hostName = regexp.MustCompile(`^(\[[0-9A-Za-z:.%_-]+\]|[0-9A-Za-z:.%_][0-9A-Za-z:.%_-]*)$`)

func checkHostNames(o Options) error {
	for i, h := range o.Hosts {
		if !hostName.MatchString(h) {
			return fmt.Errorf("%s: host %d %q is not a host name or address", hostWhere(o, i), i, h)
		}
	}
	if o.MasterAddr != "" && !hostName.MatchString(o.MasterAddr) {
		return fmt.Errorf("master address %q is not a host name or address", o.MasterAddr)
	}
	return nil
}

// checkStaticMaster refuses a master address that is another node's host:
// with static rendezvous the agent of node rank 0 serves the TCPStore
// (StaticTCPRendezvous: is_master = rank == 0), so the master must be an
// address of the first host; any other node's would never answer. A
// c10d endpoint may be any node: the agent whose host it names serves.
func checkStaticMaster(d *diag.List, o Options, hosts []string) {
	if o.Rendezvous != Static || o.MasterAddr == "" || len(hosts) < 2 {
		return
	}
	key := hostKey(o.MasterAddr)
	for i, h := range hosts[1:] {
		if hostKey(h) == key && hostKey(hosts[0]) != key {
			d.Add(diag.RuleMasterNotFirstHost, diag.Pos{}, "",
				fmt.Sprintf("drop --master-addr (the first host is the default), give another address of %s, or list %s first", hosts[0], h),
				"master address %q is node %d (%s), but with static rendezvous node rank 0, %s, serves the rendezvous", o.MasterAddr, i+1, hostWhere(o, i+1), hosts[0])
			return
		}
	}
}

func hostWhere(o Options, i int) string {
	src := cmp.Or(o.HostSource, "hosts")
	if i < len(o.HostLines) && o.HostLines[i] > 0 {
		return fmt.Sprintf("%s:%d", src, o.HostLines[i])
	}
	return src
}

func checkHosts(d *diag.List, l *layout.Layout, nnodes int, hosts []string, o Options) {
	if hosts == nil {
		return
	}
	if len(hosts) != nnodes {
		pos, what := diag.Pos{}, "the layout has no cluster, so it runs on 1 node"
		if l.Given("cluster") {
			pos, what = l.Pos("cluster.nodes"), fmt.Sprintf("cluster.nodes is %d", nnodes)
		}
		d.Add(diag.RuleHostCountMismatch, pos, "",
			fmt.Sprintf("give exactly %d host(s), one per node, in node-rank order", nnodes),
			"%s gives %d host(s), but %s", cmp.Or(o.HostSource, "the host list"), len(hosts), what)
	}
	seen := map[string]int{}
	for i, h := range hosts {
		key := hostKey(h)
		if j, ok := seen[key]; ok {
			where := fmt.Sprintf("node %d and again node %d (%s)", j, i, cmp.Or(o.HostSource, "the host list"))
			if i < len(o.HostLines) {
				where = fmt.Sprintf("node %d (%s) and again node %d (%s)", j, hostWhere(o, j), i, hostWhere(o, i))
			}
			d.Add(diag.RuleDuplicateHost, diag.Pos{}, "",
				"list each machine once: one torchrun per node starts all of that node's GPUs",
				"host %q is %s", h, where)
			continue
		}
		seen[key] = i
	}
}

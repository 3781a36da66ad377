package lenient

// Partial returns the value read so far, for a reader fed a value that is
// still coming (a streamed answer): the containers still open, each with
// the members and items complete so far, the one being read last; a member
// or item not yet complete (a string still open, a number that may go on)
// is left out. It returns Root once the value is done, and nil before it
// starts or when it is a scalar not yet complete. The open containers are
// copies, never clean (AppendJSON writes them from their members): reading
// on does not change what Partial returned.
func (p *Reader) Partial() *Node {
	if p.Root != nil || len(p.stack) == 0 {
		return p.Root
	}
	var root, parent *Node
	for i, f := range p.stack {
		n := &Node{Kind: f.node.Kind, Start: f.node.Start,
			Keys: append([]string(nil), f.node.Keys...), Kids: append([]*Node(nil), f.node.Kids...)}
		if parent == nil {
			root = n
		} else {
			// n is the value of the member or item the parent reads now
			pf := p.stack[i-1]
			if parent.Kind == Object {
				parent.Keys = append(parent.Keys, pf.key)
			}
			parent.Kids = append(parent.Kids, n)
		}
		parent = n
	}
	return root
}

// Progress counts what the reader has read: it changes each time a member
// or an item is complete and each time a container opens or closes (and
// only then), so that a caller asks for Partial when there is something
// new to see.
func (p *Reader) Progress() int {
	if p.Root != nil {
		return -1
	}
	n := 2 * len(p.stack)
	for _, f := range p.stack {
		n += len(f.node.Kids)
	}
	return n
}

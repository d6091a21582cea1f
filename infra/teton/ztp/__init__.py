"""Day 0: a factory-fresh switch finds its address and its files by itself.

`teton ztp BUILD --inventory FILE -o DIR` writes what DHCP and provisioning need for a build's switches whose MAC
addresses are known (`inventory`: the shipping manifest as CSV): Kea's configuration (`kea`), per switch its NOS's
provisioning files (`provision`) beside copies of its build files, the index the server serves from (`index`) and a
manifest (`write`).  `teton ztp serve DIR` serves exactly those files, resolving secret references at fetch time, and
shows which switches have fetched theirs (`serve`, `status`).
"""

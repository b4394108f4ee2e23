// Package network holds the rules about the network between pods: an
// egress policy that cuts a namespace off from its DNS (BF304), a mesh's
// outlier detection that can eject every endpoint of a service (BF701).
package network

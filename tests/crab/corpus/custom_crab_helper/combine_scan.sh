#!/bin/sh
test -f EFTWorkspace.root || { echo "no workspace"; exit 1; }
echo "scan point $1" > higgsCombine.root

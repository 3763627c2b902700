#!/bin/bash
# CRAB passes the job number first, then scriptArgs as key=value
echo "job $1"; shift
for arg in "$@"; do
  case $arg in
    card=*) card=${arg#card=} ;;
    output=*) output=${arg#output=} ;;
    location=*) location=${arg#location=} ;;
  esac
done
test -f "$card" || { echo "card $card missing"; exit 1; }
tar xzf dijetMacro.tar.gz || exit 1
test -f FrameworkJobReport.xml || exit 1
echo "histograms of $(grep -c . "$card") settings, files read at location $location" > "$output"

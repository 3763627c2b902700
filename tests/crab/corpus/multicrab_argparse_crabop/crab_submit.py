#!/usr/bin/env python3

from __future__ import print_function

import argparse
import http
import math
import subprocess
import sys

from CRABClient.UserUtilities import ClientException
from CRABClient.UserUtilities import getUsernameFromCRIC
from CRABAPI.RawCommand import crabCommand

import crab_config


def main() :

    parser = argparse.ArgumentParser(formatter_class = argparse.ArgumentDefaultsHelpFormatter)

    parser.add_argument("--samples", help = "Datasets to submit", type = str, nargs = "*",
                        required = "--pycfg" in sys.argv)
    parser.add_argument("--pycfg", help = "CMSSW configuration to run", type = str,
                        required = "--samples" in sys.argv)
    parser.add_argument("--dryrun", help = "CRAB dry run", default = False, action = "store_true")
    parser.add_argument("--maxunits", help = "Most jobs of a FileBased task", type = int, default = 5000)
    parser.add_argument("--crabop", help = "CRAB operation", type = str, required = True,
                        choices = ["submit", "resubmit", "status"])

    args = parser.parse_args()

    if (args.crabop == "submit") :

        args.samples = [_s for _s in args.samples if not _s.startswith("#")]

        for iSample, sample in enumerate(args.samples) :

            print("*"*80)
            print(f"[{iSample+1}/{len(args.samples)}] {sample}")
            print("*"*80)

            crab_cfg = crab_config.get_config_default()

            crab_cfg.General.requestName = sample.strip().split("/")[1]
            crab_cfg.JobType.psetName = args.pycfg
            crab_cfg.Data.inputDataset = sample

            if (crab_cfg.Data.splitting == "FileBased") :

                nFile = int(subprocess.check_output(f"dasgoclient -query=\"file dataset={sample}\" | wc -l",
                                                    shell = True))

                if (nFile > args.maxunits) :

                    crab_cfg.Data.unitsPerJob = int(math.ceil(nFile / args.maxunits))

            try :

                crabCommand(args.crabop, config = crab_cfg, dryrun = args.dryrun)

            except http.client.HTTPException as exc :

                print("HTTPException")
                print(exc)

            except ClientException as exc :

                print("ClientException")
                print(exc)

    return 0


if (__name__ == "__main__") :

    main()

#!/usr/bin/env python
# Trigger-rate ntuples of the 2017 ZeroBias data (written for CRAB on Python 2, later run on Python 3).
from CRABClient.UserUtilities import config, getUsernameFromSiteDB
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from httplib import HTTPException

config = config()
config.General.workArea = 'crab_zerobias_2017'
config.General.transferOutputs = True
config.General.transferLogs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'rates_cfg.py'
config.JobType.maxMemoryMB = 2000

config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 2
config.Data.totalUnits = 10
config.Data.publication = False
config.Data.outLFNDirBase = '/store/user/%s/rates2017' % getUsernameFromSiteDB()

config.Site.storageSite = 'T2_US_Nebraska'
config.Site.whitelist = ['T2_US_Nebraska', 'T1_US_FNAL', 'T2_XX_Local']

for era in ['E', 'F']:
    config.General.requestName = 'ZeroBias_Run2017%s_rates' % era
    config.Data.inputDataset = '/ZeroBias/Run2017%s-09Aug2019_UL2017-v1/MINIAOD' % era
    try:
        result = crabCommand('submit', config=config)
        print('Submitted %s as %s' % (result['requestname'], result['uniquerequestname']))
    except HTTPException as hte:
        print("Failed submitting task: %s" % (hte.headers))
    except ClientException as cle:
        print("Failed submitting task: %s" % (cle))

import os
from CRABClient.UserUtilities import config
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from http.client import HTTPException
from multiprocessing import Process
config = config()
config.General.workArea = 'crab_multi'
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'ntuplizer_cfg.py'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 20
config.Data.lumiMask = 'https://cms-service-dqmdc.web.cern.ch/CAF/certification/Collisions18/13TeV/Legacy_2018/Cert_314472-325175_13TeV_Legacy2018_Collisions18_JSON.txt'
config.Data.outLFNDirBase = '/store/user/jdoe/ntuples'
config.Data.publication = False
config.Site.storageSite = 'T2_US_Wisconsin'
def submit(config):
    try:
        crabCommand('submit', config = config)
    except HTTPException as hte:
        print("Failed submitting task: %s" % (hte.headers))
    except ClientException as cle:
        print("Failed submitting task: %s" % (cle))
if __name__ == '__main__':
    for name, ds in {'SingleMuon_A': '/SingleMuon/Run2018A-UL2018_MiniAODv2-v3/MINIAOD', 'SingleMuon_B': '/SingleMuon/Run2018B-UL2018_MiniAODv2-v2/MINIAOD'}.items():
        config.General.requestName = name
        config.Data.inputDataset = ds
        p = Process(target=submit, args=(config,))
        p.start(); p.join()

import argparse
import os

# how it is run: python3 crab_mutau_ntuples.py --mc --tag Nov26 --year 2022
parser = argparse.ArgumentParser()
parser.add_argument('--tag', '-t', default='Nov26', help='prefix of the CRAB project areas')
parser.add_argument('--year', '-y', choices=['2022', 'all'], default='2022', help='which era to submit')
parser.add_argument('--data', action='store_true', help='the collision datasets')
parser.add_argument('--mc', action='store_true', help='the simulated datasets')
parser.add_argument('--only', default=None, help='submit only the sample of this name')
args = parser.parse_args()

kinds = []
if args.data: kinds.append('Data')
if args.mc: kinds.append('MC')
years = ['2022'] if args.year == 'all' else [args.year]

psets = {'2022': 'mutau_ntuple_cfg.py'}
conditions = {'MC': {'2022': '130X_mcRun3_2022_realistic_postEE_v6'},
              'Data': {'2022': '130X_dataRun3_PromptAnalysis_v1'}}

for kind in kinds:
  for year in years:

    # a fresh config for every era and kind, as the loop goes
    from CRABClient.UserUtilities import config
    from CRABClient.UserUtilities import getUsernameFromCRIC
    from multiprocessing import Process

    print("Preparing the {} samples of {}".format(kind, year))

    config = config()
    config.General.transferOutputs = True
    config.General.workArea = '{}_{}_{}'.format(args.tag, kind, year)

    config.JobType.psetName = psets[year]
    config.JobType.pluginName = 'Analysis'
    config.JobType.outputFiles = ['MuTauTree.root']
    config.JobType.maxMemoryMB = 2500
    options = ['globalTag={}'.format(conditions[kind][year]), 'isData={}'.format(int(kind == 'Data'))]

    config.JobType.allowUndistributedCMSSW = True
    config.Data.outLFNDirBase = '/store/user/{}/{}/'.format(getUsernameFromCRIC(), config.General.workArea)
    config.Data.publication = False
    config.Data.allowNonValidInputDataset = True
    config.Data.ignoreLocality = True

    config.Site.whitelist = ['T2_*', 'T1_*', 'T3_*']
    config.Site.storageSite = 'T2_UK_London_IC'

    if __name__ == '__main__':

        from CRABAPI.RawCommand import crabCommand
        from http.client import HTTPException
        from CRABClient.ClientExceptions import ClientException

        def submit(config):
            try:
                crabCommand('submit', config = config, dryrun = False)
            except HTTPException as hte:
                print(hte.headers)
            except ClientException as cle:
                print(cle)

        samples = []
        if kind == 'MC' and year == '2022':
            samples.append(('DYto2L_M50_postEE', '/DYto2L-2Jets_MLL-50_TuneCP5_13p6TeV_amcatnloFXFX-pythia8/Run3Summer22EEMiniAODv4-130X_mcRun3_2022_realistic_postEE_v6-v2/MINIAODSIM'))
            samples.append(('WtoLNu_postEE', '/WtoLNu-2Jets_TuneCP5_13p6TeV_amcatnloFXFX-pythia8/Run3Summer22EEMiniAODv4-130X_mcRun3_2022_realistic_postEE_v6-v2/MINIAODSIM'))
        if kind == 'Data' and year == '2022':
            samples.append(('MuonF', '/Muon/Run2022F-22Sep2023-v2/MINIAOD'))

        for name, dataset in samples:
            if not (args.only is None or args.only == name): continue
            config.General.requestName = name
            config.Data.inputDataset = dataset
            config.JobType.pyCfgParams = options
            config.Data.userInputFiles = None  # left from a recovery pass over single files
            config.Data.splitting = 'EventAwareLumiBased'
            config.Data.unitsPerJob = 40000

            print(config)

            p = Process(target=submit, args=(config,))
            p.start()
            p.join()

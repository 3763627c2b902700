import FWCore.ParameterSet.Config as cms
process = cms.Process('WJETS')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())

import FWCore.ParameterSet.Config as cms
process = cms.Process('TOP')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())

import FWCore.ParameterSet.Config as cms
process = cms.Process('LHENANO')
process.source = cms.Source('LHESource', fileNames=cms.untracked.vstring())

import FWCore.ParameterSet.Config as cms

process = cms.Process('ZMUMU')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
process.maxEvents = cms.untracked.PSet(input=cms.untracked.int32(-1))
process.zmumu = cms.EDAnalyzer('ZMuMuTreeMaker', muons=cms.InputTag('slimmedMuons'))
process.TFileService = cms.Service('TFileService', fileName=cms.string('zmumu_tree.root'))
process.p = cms.Path(process.zmumu)

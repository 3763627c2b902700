import FWCore.ParameterSet.Config as cms
process = cms.Process('TnP')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
process.tnp = cms.EDAnalyzer('MuonTnPTreeMaker', tagCut=cms.string('pt > 27 && isTightMuon'))
process.TFileService = cms.Service('TFileService', fileName=cms.string('tnp.root'))
process.p = cms.Path(process.tnp)
